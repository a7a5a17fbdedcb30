//go:build unix

package pipeline

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/fixture"
)

// A dispatch file that became a FIFO (planted after the listing) is read as
// unreadable at once: Asks and Describe never block on it.
func TestDispatchReadsNeverBlockOnAFIFO(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "7-build-implementer.md")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	pl := &Pipeline{Files: map[int]string{7: fifo}}
	d := &Dispatch{Seq: 7}
	done := make(chan struct{})
	var ask Ask
	var context string
	go func() {
		defer close(done)
		ask, context = pl.Asks(d), pl.dispatchContext(d)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		// Unblock the reader so the test ends, then fail.
		if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			w.Close()
		}
		t.Fatal("reading a FIFO dispatch file blocked")
	}
	assert.Equal(t, AskUnknown, ask)
	assert.Empty(t, context)
}

// A plan document that is a link (to a private file elsewhere) is not read:
// its text never becomes a task's description; a real one is.
func TestPlanTasksSkipLinkedDocuments(t *testing.T) {
	t.Parallel()
	project := t.TempDir()
	secret := filepath.Join(t.TempDir(), "secret.md")
	require.NoError(t, os.WriteFile(secret, []byte("### Task 9: PRIVATE\n"), 0o600))
	require.NoError(t, os.MkdirAll(filepath.Join(project, "docs", "plans"), 0o755))
	require.NoError(t, os.Symlink(secret, filepath.Join(project, "docs", "plans", "a.md")))
	require.NoError(t, os.WriteFile(filepath.Join(project, "docs", "plans", "b.md"), []byte("### Task 1: login form\n"), 0o644))
	tasks := planTasks(project)
	assert.Contains(t, tasks[1], "login form")
	assert.NotContains(t, tasks, 9)
}

// A dispatch directory the run holds as a symbolic link sets ProjectErr (the
// writers' refusal), while a link the user names as PATH is the user's own.
func TestLinkedDispatchDirRefusesWrites(t *testing.T) {
	t.Parallel()
	p, err := fixture.Build(t.TempDir(), fixture.Options{})
	require.NoError(t, err)
	elsewhere := filepath.Join(p.Root, "elsewhere")
	require.NoError(t, os.Rename(p.DurableDispatchDir, elsewhere))
	require.NoError(t, os.Symlink(elsewhere, p.DurableDispatchDir))

	pl, err := Load(Options{Path: p.Scratch, Home: p.Home, Tmp: p.Tmp, SysTmp: p.SysTmp, Cwd: p.Project})
	require.NoError(t, err, "a run is still read")
	require.Error(t, pl.ProjectErr)
	assert.Contains(t, pl.ProjectErr.Error(), "symbolic link")

	named, err := Load(Options{Path: p.DurableDispatchDir, Home: p.Home, Tmp: p.Tmp, SysTmp: p.SysTmp, Cwd: p.Project})
	require.NoError(t, err)
	assert.NoError(t, named.ProjectErr, "the user's own PATH is followed")
}

// A scratch directory reached through a link below ~/.claude/projects (memory or
// <H> planted as a link) sets ProjectErr, whether found from $HOME or named as
// PATH; a link the user names outside that layout, and a real directory, pass.
func TestLinkedScratchDirRefusesWrites(t *testing.T) {
	t.Parallel()
	p, err := fixture.Build(t.TempDir(), fixture.Options{})
	require.NoError(t, err)
	real, err := Load(Options{Home: p.Home, Tmp: p.Tmp, SysTmp: p.SysTmp, Cwd: p.Project})
	require.NoError(t, err)
	assert.NoError(t, real.ProjectErr, "a real scratch directory passes")

	elsewhere := filepath.Join(p.Root, "elsewhere")
	require.NoError(t, os.Rename(p.Scratch, elsewhere))
	require.NoError(t, os.Symlink(elsewhere, p.Scratch))
	for _, path := range []string{"", p.Scratch, p.ManifestPath} {
		pl, err := Load(Options{Path: path, Home: p.Home, Tmp: p.Tmp, SysTmp: p.SysTmp, Cwd: p.Project})
		require.NoError(t, err, "a run is still read")
		require.Error(t, pl.ProjectErr, "PATH %q", path)
		assert.Contains(t, pl.ProjectErr.Error(), "symbolic link")
		assert.Contains(t, pl.ProjectErr.Error(), p.Scratch)
	}

	mine := filepath.Join(p.Root, "my-scratch")
	require.NoError(t, os.Symlink(elsewhere, mine))
	pl, err := Load(Options{Path: mine, Scratch: mine, Shadow: p.Shadow, Home: p.Home, Tmp: p.Tmp, SysTmp: p.SysTmp, Cwd: p.Project})
	require.NoError(t, err)
	assert.NoError(t, pl.ProjectErr, "the user's own link outside ~/.claude/projects is followed")
}

// CheckProjectsDir checks every folder between ~/.claude/projects and the scratch
// dir; ~/.claude itself (a dotfiles link), missing folders and paths outside the
// layout pass.
func TestCheckProjectsDir(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	home := filepath.Join(root, "home")
	dotfiles := filepath.Join(root, "dotfiles", "claude")
	require.NoError(t, os.MkdirAll(filepath.Join(dotfiles, "projects", "h1", "memory"), 0o755))
	require.NoError(t, os.MkdirAll(home, 0o755))
	require.NoError(t, os.Symlink(dotfiles, filepath.Join(home, ".claude")))
	other := filepath.Join(root, "other")
	require.NoError(t, os.MkdirAll(filepath.Join(other, "memory"), 0o755))
	require.NoError(t, os.Symlink(other, filepath.Join(dotfiles, "projects", "h2")))
	require.NoError(t, os.Symlink(filepath.Join(other, "memory"), filepath.Join(dotfiles, "projects", "h1", "linked")))
	projects := filepath.Join(home, ".claude", "projects")
	alias := filepath.Join(root, "alias") // the user's own link to a project folder
	require.NoError(t, os.Symlink(filepath.Join(dotfiles, "projects", "h1"), alias))
	for path, refused := range map[string]bool{
		filepath.Join(projects, "h1", "memory"):             false,
		filepath.Join(projects, "h2", "memory"):             true,
		filepath.Join(projects, "h1", "linked"):             true,
		filepath.Join(projects, "h1", "linked", "sub"):      true,
		filepath.Join(projects, "h3", "memory"):             false,
		filepath.Join(other, "memory"):                      false,
		filepath.Join(dotfiles, "projects", "h2", "memory"): true, // home's real form
		filepath.Join(alias, "linked"):                      true, // reached through a link to the layout
		filepath.Join(alias, "memory"):                      false,
	} {
		err := CheckProjectsDir(path, home)
		if refused {
			assert.ErrorContains(t, err, "symbolic link", path)
		} else {
			assert.NoError(t, err, path)
		}
	}
}
