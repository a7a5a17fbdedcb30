package checkpoint

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/fixture"
)

func yes(ConfirmRequest) (bool, error) { return true, nil }

func TestRestoreRoundTrip(t *testing.T) {
	t.Parallel()
	p := newTestProject(t)
	s := p.store()
	start := p.head()
	cp, _, err := s.Create(CreateOptions{Reason: "pre-wave-1", Source: "build", Now: clockAt(time.Hour)})
	require.NoError(t, err)
	want := p.state()

	// Edit, add, delete, chmod, retarget a symlink, turn a file into a directory and
	// a directory into a file, touch ignored files, and commit on the branch.
	p.write("README.md", "# changed\n")
	p.write("new/file.txt", "added\n")
	require.NoError(t, os.Remove(p.abs("src/app.go")))
	require.NoError(t, os.Chmod(p.abs("run.sh"), 0o644))
	p.symlink("docs", "README.md")
	moved := p.commit("task 1", base.Add(2*time.Hour))
	require.NoError(t, os.RemoveAll(p.abs("src/deep")))
	p.write("src/deep", "now a file\n")
	p.write("node_modules/lib/index.js", "module.exports = 2\n")
	p.write("later.log", "written after the checkpoint\n")
	changed := p.state()
	ignored := map[string]string{"node_modules/lib/index.js": changed["node_modules/lib/index.js"], "later.log": changed["later.log"], "build.log": changed["build.log"]}

	var log bytes.Buffer
	marker := &Marker{Branch: "feat/login"}
	rep, err := s.Restore(*cp, RestoreOptions{Session: "1775430161", Marker: marker, Confirm: yes, Now: clockAt(3 * time.Hour), Log: &log})
	require.NoError(t, err, log.String())

	got := p.state()
	for path, v := range ignored {
		assert.Equal(t, v, got[path], "ignored %s untouched", path)
		delete(got, path)
	}
	for path := range want {
		if _, ok := ignored[path]; ok {
			delete(want, path)
		}
	}
	assert.Equal(t, want, got, "byte-for-byte and mode-for-mode the checkpoint")
	assert.Equal(t, start, p.head(), "the branch is back at the checkpoint's project head")
	assert.Equal(t, moved, rep.PreviousHead)
	assert.Equal(t, start, rep.ProjectHead)
	assert.Equal(t, 5, rep.Written)
	assert.Equal(t, 2, rep.Removed)
	assert.Positive(t, rep.Unchanged)
	ref, err := p.repo.Reference("refs/replay/pre-restore/1775430161", false)
	require.NoError(t, err)
	assert.Equal(t, moved, ref.Hash())
	require.NotNil(t, rep.Safety)
	assert.Equal(t, SafetyReason, rep.Safety.Reason)
	assert.Equal(t, moved, rep.Safety.ProjectHead)
	assert.Contains(t, log.String(), "To undo this restore: replay checkpoint restore "+rep.Safety.Short+" --yes")

	// The index is the checkpoint commit's tree with fresh stat data: git status is clean.
	wt, err := p.repo.Worktree()
	require.NoError(t, err)
	st, err := wt.Status()
	require.NoError(t, err)
	assert.True(t, st.IsClean(), "status after restore: %v", st)

	// Restoring the safety checkpoint brings everything back.
	rep2, err := s.Restore(*rep.Safety, RestoreOptions{Session: "2", Confirm: yes, Now: clockAt(4 * time.Hour)})
	require.NoError(t, err)
	assert.Equal(t, changed, p.state())
	assert.Equal(t, moved, p.head())
	assert.Equal(t, 0, len(rep2.Warnings))
}

func TestRestoreGuards(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		marker   *Marker
		confirm  func(ConfirmRequest) (bool, error)
		wantErr  string
		refused  bool
		asked    bool
		warnNoBr bool
		restored bool
	}{
		{name: "branch mismatch", marker: &Marker{Branch: "main"}, confirm: yes, refused: true,
			wantErr: "Pipeline was running on branch main but you are on feat/login. Switch to main before resuming"},
		{name: "matching branch", marker: &Marker{Branch: "feat/login"}, confirm: yes, asked: true, restored: true},
		{name: "no marker", confirm: yes, asked: true, restored: true},
		{name: "marker without branch warns and still asks", marker: &Marker{}, confirm: yes, asked: true, warnNoBr: true, restored: true},
		{name: "no confirmation possible", marker: &Marker{Branch: "feat/login"}, refused: true, wantErr: "no terminal to confirm on: pass --yes"},
		{name: "declined", confirm: func(ConfirmRequest) (bool, error) { return false, nil }, refused: true, asked: true, wantErr: "declined"},
		{name: "prompt error", confirm: func(ConfirmRequest) (bool, error) { return false, errors.New("boom") }, asked: true, wantErr: "boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newTestProject(t)
			s := p.store()
			cp, _, err := s.Create(CreateOptions{Reason: "pre-wave-1", Now: clockAt(time.Hour)})
			require.NoError(t, err)
			p.write("README.md", "# changed after the checkpoint\n")
			before, err := fixture.Digest(p.root)
			require.NoError(t, err)

			asked := false
			var req ConfirmRequest
			confirm := tt.confirm
			if confirm != nil {
				confirm = func(r ConfirmRequest) (bool, error) { asked, req = true, r; return tt.confirm(r) }
			}
			var log bytes.Buffer
			rep, err := s.Restore(*cp, RestoreOptions{Session: "7", Marker: tt.marker, Confirm: confirm, Now: clockAt(2 * time.Hour), Log: &log})
			assert.Equal(t, tt.asked, asked)
			assert.Equal(t, tt.warnNoBr, bytes.Contains(log.Bytes(), []byte("records no branch")), log.String())
			if !tt.restored {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				assert.Equal(t, tt.refused, errors.Is(err, ErrRefused))
				after, derr := fixture.Digest(p.root)
				require.NoError(t, derr)
				assert.Equal(t, before, after, "not one file or ref changed")
				return
			}
			require.NoError(t, err)
			assert.Contains(t, req.Title, "(pre-wave-1, taken at 2026-04-07 15:00:00Z, branch feat/login)?")
			assert.Contains(t, req.Description, "README.md  [uncommitted changes]")
			data, err := os.ReadFile(p.abs("README.md"))
			require.NoError(t, err)
			assert.Equal(t, "# project\n", string(data))
			assert.Equal(t, 1, rep.Written)
		})
	}
}

// hostileCheckpoint commits a tree built by hand with one bad entry.
func hostileCheckpoint(t *testing.T, s *Store, entries []treeFile) Checkpoint {
	t.Helper()
	var buf bytes.Buffer
	for _, e := range entries {
		buf.WriteString(strconv.FormatUint(uint64(e.Mode), 8) + " " + e.Path + "\x00")
		buf.Write(e.Hash[:])
	}
	tree, err := s.objects.write(plumbing.TreeObject, buf.Bytes())
	require.NoError(t, err)
	sig := object.Signature{Name: "evil", Email: "e@example.com", When: base}
	h, err := s.writeCommit(&object.Commit{Author: sig, Committer: sig, Message: "pre-wave-1 | 2026-04-07 14:00:00 | evil\n", TreeHash: tree})
	require.NoError(t, err)
	return Checkpoint{Hash: h, Short: h.String()[:8], Reason: "pre-wave-1", Tree: tree, Time: base}
}

func TestRestoreRefusesHostileTrees(t *testing.T) {
	t.Parallel()
	p := newTestProject(t)
	s := p.store()
	blob := func(content string) plumbing.Hash {
		h, err := s.objects.write(plumbing.BlobObject, []byte(content))
		require.NoError(t, err)
		return h
	}
	sub := func(entries ...treeFile) plumbing.Hash {
		var buf bytes.Buffer
		for _, e := range entries {
			buf.WriteString(strconv.FormatUint(uint64(e.Mode), 8) + " " + e.Path + "\x00")
			buf.Write(e.Hash[:])
		}
		h, err := s.objects.write(plumbing.TreeObject, buf.Bytes())
		require.NoError(t, err)
		return h
	}
	tests := []struct {
		name    string
		entries []treeFile
		want    string
	}{
		{"dot-dot entry", []treeFile{{Path: "..", Mode: 0o40000, Hash: sub(treeFile{Path: "evil", Mode: 0o100644, Hash: blob("x")})}}, "not a file name"},
		{"slash path", []treeFile{{Path: "../../evil", Mode: 0o100644, Hash: blob("x")}}, "path separator"},
		{"absolute path", []treeFile{{Path: "/etc/evil", Mode: 0o100644, Hash: blob("x")}}, "path separator"},
		{".git entry", []treeFile{{Path: ".git", Mode: 0o40000, Hash: sub(treeFile{Path: "config", Mode: 0o100644, Hash: blob("x")})}}, "into .git"},
		// Names that open .git on NTFS (trailing dots and spaces, a stream, the 8.3
		// name) or HFS+ (ignored code points): git refuses them everywhere too.
		{".git. entry", []treeFile{{Path: ".git.", Mode: 0o40000, Hash: sub(treeFile{Path: "config", Mode: 0o100644, Hash: blob("x")})}}, "into .git"},
		{".git and spaces", []treeFile{{Path: ".GIT . ", Mode: 0o40000, Hash: sub(treeFile{Path: "config", Mode: 0o100644, Hash: blob("x")})}}, "into .git"},
		{"git~1 entry", []treeFile{{Path: "GIT~1", Mode: 0o40000, Hash: sub(treeFile{Path: "config", Mode: 0o100644, Hash: blob("x")})}}, "into .git"},
		{".git stream", []treeFile{{Path: ".git::$INDEX_ALLOCATION", Mode: 0o40000, Hash: sub(treeFile{Path: "config", Mode: 0o100644, Hash: blob("x")})}}, "into .git"},
		{"hfs ignorable", []treeFile{{Path: ".g\u200cit", Mode: 0o40000, Hash: sub(treeFile{Path: "config", Mode: 0o100644, Hash: blob("x")})}}, "into .git"},
		{"nested .git.", []treeFile{{Path: "sub", Mode: 0o40000, Hash: sub(treeFile{Path: ".git.", Mode: 0o40000, Hash: sub(treeFile{Path: "config", Mode: 0o100644, Hash: blob("x")})})}}, "into .git"},
		{"symlink into .git.", []treeFile{{Path: "l", Mode: 0o120000, Hash: blob(".git./hooks")}}, "into .git"},
		{"symlink out", []treeFile{{Path: "out", Mode: 0o120000, Hash: blob("../../outside")}}, "outside the project"},
		{"absolute symlink", []treeFile{{Path: "abs", Mode: 0o120000, Hash: blob("/etc/passwd")}}, "absolute path"},
		{"nested symlink out", []treeFile{{Path: "d", Mode: 0o40000, Hash: sub(treeFile{Path: "l", Mode: 0o120000, Hash: blob("../..")})}}, "outside the project"},
		{"dot-dot after a name", []treeFile{{Path: "l", Mode: 0o120000, Hash: blob("docs/../..")}}, "follows a name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			entries := append([]treeFile{{Path: "README.md", Mode: 0o100644, Hash: blob("pwned\n")}}, tt.entries...)
			cp := hostileCheckpoint(t, s, entries)
			before, err := fixture.Digest(p.root)
			require.NoError(t, err)
			_, err = s.Restore(cp, RestoreOptions{Confirm: yes, Now: clockAt(time.Hour)})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.Contains(t, err.Error(), "nothing was written")
			assert.ErrorIs(t, err, ErrRefused)
			after, err := fixture.Digest(p.root)
			require.NoError(t, err)
			assert.Equal(t, before, after)
		})
	}
}

func TestRestoreNeverWritesThroughASymlink(t *testing.T) {
	t.Parallel()
	p := newTestProject(t)
	outside := filepath.Join(p.root, "outside")
	require.NoError(t, os.MkdirAll(outside, 0o755))
	s := p.store()
	cp, _, err := s.Create(CreateOptions{Reason: "pre-wave-1", Now: clockAt(time.Hour)})
	require.NoError(t, err)
	// Replace the real directory src/ by a symlink to a directory outside the project.
	require.NoError(t, os.RemoveAll(p.abs("src")))
	p.symlink("src", outside)
	_, err = s.Restore(*cp, RestoreOptions{Confirm: yes, Now: clockAt(2 * time.Hour)})
	require.NoError(t, err)
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing was written outside the project")
	info, err := os.Lstat(p.abs("src"))
	require.NoError(t, err)
	assert.True(t, info.IsDir())
}

func TestRestoreForeignCheckpointInfersTheProjectHead(t *testing.T) {
	t.Parallel()
	p := newTestProject(t)
	s := p.store()
	first := p.head()
	p.foreign(s, "pre-wave-1 | 2026-04-07 14:30:00 | build", base.Add(30*time.Minute))
	cps, _, err := s.List()
	require.NoError(t, err)
	p.write("a.go", "package a\n")
	p.commit("task 1", base.Add(time.Hour))
	_, err = s.Restore(cps[0], RestoreOptions{Confirm: yes, Now: clockAt(2 * time.Hour)})
	require.NoError(t, err)
	assert.Equal(t, first, p.head())
	_, err = os.Stat(p.abs("a.go"))
	assert.True(t, os.IsNotExist(err))
	_, err = git.PlainOpen(p.dir)
	require.NoError(t, err)
}

func TestRestoreRefusesToOverwriteAnIgnoredFile(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, content string
		ok            bool
	}{{"same content passes", "kept\n", true}, {"other content is refused", "edited\n", false}} {
		t.Run(tt.name, func(t *testing.T) {
			p := newTestProject(t)
			p.write("notes.tmp", "kept\n")
			s := p.store()
			cp, _, err := s.Create(CreateOptions{Reason: "pre-wave-1", Now: clockAt(time.Hour)})
			require.NoError(t, err)
			p.write(".gitignore", "node_modules/\n*.log\n*.tmp\n")
			p.write("notes.tmp", tt.content)
			before, err := fixture.Digest(p.root)
			require.NoError(t, err)
			_, err = s.Restore(*cp, RestoreOptions{Confirm: yes, Now: clockAt(2 * time.Hour)})
			if tt.ok {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), "notes.tmp: it is ignored now and differs")
			after, err := fixture.Digest(p.root)
			require.NoError(t, err)
			assert.Equal(t, before, after)
		})
	}
}

func TestRestoreNeverOverwritesAnEarlierSafetyRef(t *testing.T) {
	t.Parallel()
	p := newTestProject(t)
	s := p.store()
	cp, _, err := s.Create(CreateOptions{Reason: "pre-wave-1", Source: "build", Now: clockAt(time.Hour)})
	require.NoError(t, err)
	first := p.commit("task 1", base.Add(2*time.Hour))
	opts := RestoreOptions{Session: "1775440961", Confirm: Confirmation(true, nil), Now: clockAt(3 * time.Hour)}
	rep1, err := s.Restore(*cp, opts)
	require.NoError(t, err)
	p.write("later.txt", "made after the first restore\n")
	second := p.commit("task 2", base.Add(4*time.Hour))
	rep2, err := s.Restore(*cp, opts)
	require.NoError(t, err)

	assert.Equal(t, "refs/replay/pre-restore/1775440961", rep1.SafetyRef)
	assert.Equal(t, "refs/replay/pre-restore/1775440961-2", rep2.SafetyRef)
	for ref, want := range map[string]plumbing.Hash{rep1.SafetyRef: first, rep2.SafetyRef: second} {
		got, err := p.repo.Reference(plumbing.ReferenceName(ref), false)
		require.NoError(t, err)
		assert.Equal(t, want, got.Hash(), ref)
	}
}
