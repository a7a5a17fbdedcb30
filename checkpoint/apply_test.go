package checkpoint

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRestoreRewritesFilesInPlaceButNeverAHardLink: a changed file with no other
// link is rewritten (same inode, its own permissions kept); a file hard-linked from
// elsewhere, and a read-only one, are replaced, so the other link keeps its content.
func TestRestoreRewritesFilesInPlaceButNeverAHardLink(t *testing.T) {
	t.Parallel()
	p := newTestProject(t)
	p.writeMode("private.txt", "secret v1\n", 0o600)
	p.writeMode("frozen.txt", "frozen v1\n", 0o444)
	s := p.store()
	cp, _, err := s.Create(CreateOptions{Reason: "pre-wave-1", Now: clockAt(time.Hour)})
	require.NoError(t, err)
	want := p.state()

	p.write("README.md", "# project, edited at length by an agent\n")
	p.writeMode("private.txt", "secret v2, longer\n", 0o600)
	require.NoError(t, os.Chmod(p.abs("frozen.txt"), 0o644))
	p.writeMode("frozen.txt", "frozen v2\n", 0o444)
	other := filepath.Join(p.root, "elsewhere.go")
	p.write("src/app.go", "package app // edited\n")
	require.NoError(t, os.Link(p.abs("src/app.go"), other))
	readmeBefore, err := os.Lstat(p.abs("README.md"))
	require.NoError(t, err)

	rep, err := s.Restore(*cp, RestoreOptions{Confirm: yes, Now: clockAt(2 * time.Hour)})
	require.NoError(t, err)
	assert.Equal(t, 4, rep.Written)
	assert.Equal(t, want, p.state())
	readmeAfter, err := os.Lstat(p.abs("README.md"))
	require.NoError(t, err)
	assert.True(t, os.SameFile(readmeBefore, readmeAfter), "an unlinked file is rewritten in place")
	info, err := os.Lstat(p.abs("private.txt"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "a rewritten file keeps its permissions")
	data, err := os.ReadFile(other)
	require.NoError(t, err)
	assert.Equal(t, "package app // edited\n", string(data), "the other link of a hard-linked file is left alone")

	// The next checkpoint, after the safety checkpoint, holds the restored tree.
	again, created, err := s.Create(CreateOptions{Reason: "after", Now: clockAt(3 * time.Hour)})
	require.NoError(t, err)
	assert.True(t, created)
	assert.Equal(t, cp.Tree, again.Tree)
}

// TestRewriteInPlaceCutsToTheBlobsSize: a file rewritten in place is written over
// from its start and cut to the blob's size, whether it was longer, shorter or the
// blob is empty, and the stat data the restore records is the file's final one.
func TestRewriteInPlaceCutsToTheBlobsSize(t *testing.T) {
	t.Parallel()
	p := newTestProject(t)
	p.write("empty.txt", "")
	s := p.store()
	cp, _, err := s.Create(CreateOptions{Reason: "pre-wave-1", Now: clockAt(time.Hour)})
	require.NoError(t, err)
	want := p.state()

	p.write("README.md", "# project, much longer than the checkpoint's version of it\n")
	p.write("src/app.go", "pkg\n")
	p.write("empty.txt", "no longer empty\n")
	_, err = s.Restore(*cp, RestoreOptions{Confirm: yes, Now: clockAt(2 * time.Hour)})
	require.NoError(t, err)
	assert.Equal(t, want, p.state())
	c := s.loadCache()
	for _, rel := range []string{"README.md", "src/app.go", "empty.txt"} {
		info, err := os.Lstat(p.abs(rel))
		require.NoError(t, err)
		r, ok := c.find(rel)
		require.True(t, ok, rel)
		assert.Equal(t, info.Size(), r.size, rel)
		assert.Equal(t, info.ModTime().UnixNano(), r.mtime, rel)
	}
}

// TestRestoreCallsItsFaultPoints: a restore calls RestoreOptions.Fault once the
// safety checkpoint and its ref are saved (no file written yet), after each file
// it writes (naming it, the file already whole) and once every file is written,
// in that order; the crash simulator kills replay there.
func TestRestoreCallsItsFaultPoints(t *testing.T) {
	t.Parallel()
	p := newTestProject(t)
	p.write("a.txt", "a v1\n")
	p.write("src/b.txt", "b v1\n")
	s := p.store()
	cp, _, err := s.Create(CreateOptions{Reason: "pre-wave-1", Now: clockAt(time.Hour)})
	require.NoError(t, err)
	p.write("a.txt", "a v2\n")
	p.write("src/b.txt", "b v2\n")
	var points []string
	fault := func(point, file string) {
		switch point {
		case FaultSafetySaved:
			data, err := os.ReadFile(p.abs("a.txt"))
			require.NoError(t, err)
			assert.Equal(t, "a v2\n", string(data), "nothing is restored when the safety checkpoint is saved")
			refs, err := filepath.Glob(filepath.Join(p.abs(".git"), "refs", "replay", "pre-restore", "*"))
			require.NoError(t, err)
			assert.NotEmpty(t, refs, "the safety checkpoint's ref is written")
		case FaultFileWritten:
			data, err := os.ReadFile(file)
			require.NoError(t, err)
			assert.Contains(t, string(data), " v1\n", "the file named is written whole")
			rel, err := filepath.Rel(p.abs(""), file)
			require.NoError(t, err)
			point += " " + filepath.ToSlash(rel)
		}
		points = append(points, point)
	}
	_, err = s.Restore(*cp, RestoreOptions{Confirm: yes, Now: clockAt(2 * time.Hour), Fault: fault})
	require.NoError(t, err)
	require.Len(t, points, 4)
	assert.Equal(t, FaultSafetySaved, points[0])
	assert.ElementsMatch(t, []string{FaultFileWritten + " a.txt", FaultFileWritten + " src/b.txt"}, points[1:3])
	assert.Equal(t, FaultFilesWritten, points[3])
}
