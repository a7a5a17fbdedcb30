package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A run whose dispatch directory is a symbolic link (the durable copy in the
// scratch dir pointing at another folder, say ~/.claude/commands) makes a
// resume refuse before anything is written: no dispatch file, manifest line,
// torn sidecar or recording lands where the link leads. Read-only commands
// still read the run, and warn.
func TestResumeNeverWritesThroughALinkedDispatchDir(t *testing.T) {
	s, p := pipelineSandbox(t)
	elsewhere := filepath.Join(p.Root, "elsewhere")
	require.NoError(t, os.Rename(p.DurableDispatchDir, elsewhere))
	require.NoError(t, os.Symlink(elsewhere, p.DurableDispatchDir))
	before := digest(t, elsewhere)

	r := runGuarded(t, s, p.Project, p.Scratch, "--yes", "--agent", "builtin:sim", "--now", now(p))
	assert.NotEqual(t, 0, r.Code, r.Stdout)
	assert.Contains(t, r.Stderr, "symbolic link")
	assert.Equal(t, before, digest(t, elsewhere), "nothing written where the link leads")

	plan := runGuarded(t, s, p.Project, "plan", p.Scratch, "--now", now(p))
	assert.Equal(t, 0, plan.Code, plan.Stderr)
	assert.Contains(t, plan.Stdout+plan.Stderr, "symbolic link", "the plan warns")
}

// A scratch directory under ~/.claude/projects that is a symbolic link (memory
// pointing at another folder) is the same attack as a linked shadow folder:
// replay's writes (archived markers, the durable dispatch copy's lines, A/B
// worktrees, forks) would land where it leads. Every writer refuses before
// writing, whether the scratch dir was found from $HOME or typed as PATH; a
// plan warns. A scratch directory the user names outside that layout (their
// own link) is followed, and a real one is let through.
func TestLinkedScratchDirRefusesWrites(t *testing.T) {
	s, p := pipelineSandbox(t)
	elsewhere := filepath.Join(p.Root, "elsewhere")
	require.NoError(t, os.Rename(p.Scratch, elsewhere))
	require.NoError(t, os.Symlink(elsewhere, p.Scratch))
	before := digest(t, elsewhere)

	for name, args := range map[string][]string{
		"resume from $HOME":  {"--yes", "--agent", "builtin:sim", "--now", now(p)},
		"resume of the PATH": {p.Scratch, "--yes", "--agent", "builtin:sim", "--now", now(p)},
		"fork":               {"fork", p.Scratch, "--at", "15", "--now", now(p)},
		"manifest cleanup":   {"manifest", "cleanup", "--dir", p.LiveDispatchDir, "--scratch", p.Scratch, "--failed"},
	} {
		r := runGuarded(t, s, p.Project, args...)
		assert.NotEqual(t, 0, r.Code, "%s: %s", name, r.Stdout)
		assert.Contains(t, r.Stderr, "symbolic link", name)
		assert.Equal(t, before, digest(t, elsewhere), "%s: nothing written where the link leads", name)
	}
	plan := runGuarded(t, s, p.Project, "plan", "--now", now(p))
	assert.Equal(t, 0, plan.Code, plan.Stderr)
	assert.Contains(t, plan.Stdout+plan.Stderr, "symbolic link", "the plan warns")

	// The user's own link outside ~/.claude/projects, named with --scratch, is followed.
	mine := filepath.Join(p.Root, "my-scratch")
	require.NoError(t, os.Symlink(elsewhere, mine))
	r := runGuarded(t, s, p.Project, mine, "--scratch", mine, "--shadow", p.Shadow, "--yes", "--agent", "builtin:sim", "--now", now(p))
	assert.Equal(t, 0, r.Code, r.Stderr)
	assert.NotEqual(t, before, digest(t, elsewhere), "the resume wrote through the user's own link")

	// A real scratch directory is let through.
	require.NoError(t, os.Remove(p.Scratch))
	require.NoError(t, os.Rename(elsewhere, p.Scratch))
	r = runGuarded(t, s, p.Project, "fork", p.Scratch, "--at", "15", "--now", now(p))
	assert.Equal(t, 0, r.Code, r.Stderr)
}

// The bookkeeping commands that append or move lines without loading a pipeline
// (manifest before, after, repair, cleanup) refuse a --dir that is a symbolic link
// (the live crucible-dispatch-<sid> planted as a link to another folder), or a
// durable copy reached through a linked scratch dir, through the same door resume
// uses: nothing is written where the link leads. seq still reads; the directory
// the link leads to, given as --dir, is written.
func TestManifestWritersNeverWriteThroughALinkedDispatchDir(t *testing.T) {
	s, p := pipelineSandbox(t)
	elsewhere := filepath.Join(p.Root, "elsewhere")
	require.NoError(t, os.Rename(p.LiveDispatchDir, elsewhere))
	require.NoError(t, os.Symlink(elsewhere, p.LiveDispatchDir))
	before := digest(t, elsewhere)
	scratchBefore := digest(t, p.Scratch)
	for name, args := range map[string][]string{
		"before":  {"manifest", "before", "--dir", p.LiveDispatchDir, "--seq", "40", "--file", "40-x.md", "--role", "build-implementer"},
		"after":   {"manifest", "after", "--dir", p.LiveDispatchDir, "--seq", "1", "--status", "completed"},
		"repair":  {"manifest", "repair", "--dir", p.LiveDispatchDir},
		"cleanup": {"manifest", "cleanup", "--dir", p.LiveDispatchDir, "--scratch", filepath.Join(p.Root, "new-scratch"), "--failed"},
	} {
		r := runGuarded(t, s, p.Project, args...)
		assert.Equal(t, 1, r.Code, "%s: %s", name, r.Stdout) // the script's failure code
		assert.Contains(t, r.Stderr, "symbolic link", name)
		assert.Equal(t, before, digest(t, elsewhere), "%s: nothing written where the link leads", name)
		assert.NoDirExists(t, filepath.Join(p.Root, "new-scratch"), name)
	}
	assert.Equal(t, scratchBefore, digest(t, p.Scratch))
	seq := runGuarded(t, s, p.Project, "manifest", "seq", "--dir", p.LiveDispatchDir)
	assert.Equal(t, 0, seq.Code, seq.Stderr)

	r := runGuarded(t, s, p.Project, "manifest", "before", "--dir", elsewhere, "--seq", "40", "--file", "40-x.md", "--role", "build-implementer")
	assert.Equal(t, 0, r.Code, r.Stderr)
	assert.NotEqual(t, before, digest(t, elsewhere), "the directory the link leads to is written")
}

// `manifest repair` refuses a torn last line longer than an append would set
// aside (a sparse run of NULs): nothing is written, no backup, no sidecar.
func TestRepairRefusesAHugeTornLine(t *testing.T) {
	s, p := pipelineSandbox(t)
	dir := filepath.Join(p.Root, "d")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	path := filepath.Join(dir, "manifest.jsonl")
	line := `{"seq":1,"file":"1-a.md","role":"a","status":"dispatched"}` + "\n"
	require.NoError(t, os.WriteFile(path, []byte(line+"junk\n"), 0o644))
	require.NoError(t, os.Truncate(path, 64<<20))
	r := runGuarded(t, s, p.Project, "manifest", "repair", "--dir", dir)
	assert.NotEqual(t, 0, r.Code, r.Stdout)
	assert.Contains(t, r.Stderr, "nothing was written")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no backup, no sidecar")
}
