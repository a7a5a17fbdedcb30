package resume

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/config"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/checkpoint"
	"github.com/replaytool/replay/internal/fixture"
	"github.com/replaytool/replay/pipeline"
)

// setWorktree rewrites core.worktree in the shadow repository's config.
func setWorktree(t *testing.T, shadowDir, worktree string) {
	t.Helper()
	path := filepath.Join(shadowDir, "config")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	cfg := config.NewConfig()
	require.NoError(t, cfg.Unmarshal(data))
	cfg.Core.Worktree = worktree
	out, err := cfg.Marshal()
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, out, 0o644))
}

// otherClone makes a directory that looks like another checkout of the project,
// with an untracked file a restore would delete.
func otherClone(t *testing.T, p *fixture.Pipeline) string {
	t.Helper()
	dir := filepath.Join(p.Root, "other-clone")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "precious.txt"), []byte("not in any checkpoint\n"), 0o644))
	return dir
}

func TestShadowOfTheProjectPasses(t *testing.T) {
	t.Parallel()
	p := build(t)
	pl := load(t, p)
	assert.NoError(t, pl.ProjectErr)
	assert.Equal(t, p.Project, pl.ProjectDir)

	// The project reached through a symlink is the same project.
	link := filepath.Join(p.Root, "project-link")
	require.NoError(t, os.Symlink(p.Project, link))
	pl, err := pipeline.Load(pipeline.Options{Path: p.Scratch, Home: p.Home, Tmp: p.Tmp, Cwd: link})
	require.NoError(t, err)
	assert.NoError(t, pl.ProjectErr)
	assert.NoError(t, pipeline.CheckShadowProject(pl.ShadowDir, link))
}

func TestShadowWorktreeAimedAtAnotherCloneIsRefused(t *testing.T) {
	t.Parallel()
	p := build(t)
	victim := otherClone(t, p)
	pl := load(t, p)
	setWorktree(t, pl.ShadowDir, victim)
	victimBefore, err := fixture.Digest(victim)
	require.NoError(t, err)
	projectBefore, err := fixture.Digest(p.Project)
	require.NoError(t, err)

	pl, a := decideFixture(t, p)
	require.Error(t, pl.ProjectErr)
	assert.Equal(t, p.Project, pl.ProjectDir, "the project is the current directory, not core.worktree")
	msg := pl.ProjectErr.Error()
	assert.Contains(t, msg, "core.worktree is "+victim)
	assert.Contains(t, msg, "the project directory is "+p.Project)
	assert.Contains(t, strings.Join(pl.Warnings, "\n"), victim, "plan warns and still plans")
	assert.Equal(t, 1, strings.Count(strings.Join(pl.Warnings, "\n"), "core.worktree is "+victim), "warned once: %q", pl.Warnings)

	_, err = Run(a, RunOptions{Yes: true, Now: func() time.Time { return p.Now }, Tmp: p.Tmp})
	require.Error(t, err)
	assert.ErrorIs(t, err, pipeline.ErrForeignShadow)
	victimAfter, err := fixture.Digest(victim)
	require.NoError(t, err)
	assert.Equal(t, victimBefore, victimAfter, "the other clone is untouched")
	projectAfter, err := fixture.Digest(p.Project)
	require.NoError(t, err)
	assert.Equal(t, projectBefore, projectAfter, "nothing was restored")
}

func TestShadowOfAnotherProjectHashIsRefused(t *testing.T) {
	t.Parallel()
	p := build(t)
	victim := otherClone(t, p)
	// Run from the other clone: the run's shadow repository is named for p.Project.
	pl, err := pipeline.Load(pipeline.Options{Path: p.Scratch, Home: p.Home, Tmp: p.Tmp, Cwd: victim})
	require.NoError(t, err)
	require.Error(t, pl.ProjectErr)
	assert.Equal(t, victim, pl.ProjectDir)

	// Even with core.worktree agreeing with the clone, the <H> of the directory name does not.
	setWorktree(t, pl.ShadowDir, victim)
	err = pipeline.CheckShadowProject(pl.ShadowDir, victim)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "named for project hash "+filepath.Base(pl.ShadowDir))
	assert.Contains(t, err.Error(), victim)
	assert.ErrorIs(t, err, pipeline.ErrForeignShadow)
}

// askedPrompter records every question with its description and declines.
type askedPrompter struct{ asked []string }

func (p *askedPrompter) Confirm(title, description string) (bool, error) {
	p.asked = append(p.asked, title+"\n"+description)
	return false, nil
}

func (p *askedPrompter) Select(title string, options []string, _ int) (int, error) {
	p.asked = append(p.asked, title)
	return len(options) - 1, nil
}

func TestConfirmationsNameTheTargetDirectory(t *testing.T) {
	t.Parallel()
	p := build(t)
	_, a := decideFixture(t, p)
	pr := &askedPrompter{}
	var log strings.Builder
	_, err := Run(a, RunOptions{Prompter: pr, Now: func() time.Time { return p.Now }, Tmp: p.Tmp, Log: &log})
	assert.ErrorIs(t, err, checkpoint.ErrRefused)
	require.Len(t, pr.asked, 1)
	assert.Contains(t, pr.asked[0], "Restore "+p.Project+" to checkpoint ")
	assert.Contains(t, pr.asked[0], "Restore preview for "+p.Project+" (checkpoint ")
	assert.NotContains(t, log.String(), "Restoring the project directory", "declined: the directory is named in the question, and nothing says it is restoring")

	p = build(t, fixture.NoShadowRepo)
	_, a = decideFixture(t, p)
	pr = &askedPrompter{}
	_, err = Run(a, RunOptions{Prompter: pr, Now: func() time.Time { return p.Now }, Tmp: p.Tmp})
	assert.ErrorIs(t, err, ErrNotConfirmed)
	require.Len(t, pr.asked, 1)
	assert.Contains(t, pr.asked[0], "the file state of "+p.Project+" cannot be guaranteed")
}
