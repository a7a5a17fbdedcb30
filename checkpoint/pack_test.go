package checkpoint

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/testkit/gitcheck"
	"github.com/replaytool/replay/internal/testkit/testtools"
)

// gitShadow runs the git binary on the shadow repository of p and returns its output.
func gitShadow(t *testing.T, p *testProject, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"--git-dir=" + p.shadow}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+p.root, "GIT_CONFIG_GLOBAL="+filepath.Join(p.root, "nogitconfig"))
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return strings.TrimSpace(string(out))
}

func needGit(t *testing.T) {
	t.Helper()
	testtools.Git(t, "git binary not installed")
}

// shadowFiles lists the names under the shadow's objects/pack and counts its loose objects.
func shadowFiles(t *testing.T, p *testProject) (packs, idxs, others []string, loose int) {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(p.shadow, "objects", "pack"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		require.NoError(t, err)
	}
	for _, e := range entries {
		switch n := e.Name(); {
		case strings.HasSuffix(n, ".pack"):
			packs = append(packs, n)
		case strings.HasSuffix(n, ".idx"):
			idxs = append(idxs, n)
		default:
			others = append(others, n)
		}
	}
	dirs, err := filepath.Glob(filepath.Join(p.shadow, "objects", "??", "*"))
	require.NoError(t, err)
	return packs, idxs, others, len(dirs)
}

// writeMany writes n files spread over a few directories, with content version v.
func (p *testProject) writeMany(n, v int) {
	for i := 0; i < n; i++ {
		p.write(fmt.Sprintf("gen/d%d/f%03d.txt", i%7, i), fmt.Sprintf("file %d version %d\n", i, v))
	}
}

func TestSnapshotObjectsGoIntoOnePack(t *testing.T) {
	t.Parallel()
	needGit(t)
	p := newTestProject(t)
	p.writeMany(120, 1)
	s := p.store()
	first, created, err := s.Create(CreateOptions{Reason: "pre-wave-1", Now: clockAt(time.Hour)})
	require.NoError(t, err)
	require.True(t, created)
	packs, idxs, others, loose := shadowFiles(t, p)
	require.Len(t, packs, 1, "one pack for the snapshot")
	require.Len(t, idxs, 1)
	assert.Empty(t, others, "no temporary file left")
	assert.Equal(t, 1, loose, "only the commit is loose (written after the stat cache)")
	want := p.state()

	gitcheck.Repo(t, p.shadow)
	assert.Equal(t, first.Tree.String(), gitShadow(t, p, "rev-parse", first.Hash.String()+"^{tree}"))
	assert.Equal(t, "file 7 version 1", gitShadow(t, p, "cat-file", "-p", first.Hash.String()+":gen/d0/f007.txt"))

	// 60 changed files: a second pack; a single change: loose objects, no pack.
	p.writeMany(60, 2)
	second, _, err := s.Create(CreateOptions{Reason: "pre-wave-2", Now: clockAt(2 * time.Hour)})
	require.NoError(t, err)
	packs, _, _, _ = shadowFiles(t, p)
	require.Len(t, packs, 2)
	p.write("gen/d0/f000.txt", "one change\n")
	_, _, err = s.Create(CreateOptions{Reason: "pre-wave-3", Now: clockAt(3 * time.Hour)})
	require.NoError(t, err)
	packs, _, _, _ = shadowFiles(t, p)
	require.Len(t, packs, 2, "a small snapshot stays loose")
	changed := p.state()

	// A fresh store reads the packs: restore the first checkpoint (its safety
	// checkpoint packs 60+ files), then the safety checkpoint back.
	s2, err := Open(p.shadow, p.dir)
	require.NoError(t, err)
	rep, err := s2.Restore(*first, RestoreOptions{Session: "1", Confirm: yes, Now: clockAt(4 * time.Hour)})
	require.NoError(t, err)
	assert.Equal(t, want, p.state())
	gitcheck.Repo(t, p.shadow)
	assert.Equal(t, "one change", gitShadow(t, p, "cat-file", "-p", rep.Safety.Hash.String()+":gen/d0/f000.txt"))
	assert.Equal(t, second.Tree.String(), gitShadow(t, p, "rev-parse", second.Hash.String()+"^{tree}"))
	_, err = s2.Restore(*rep.Safety, RestoreOptions{Session: "2", Confirm: yes, Now: clockAt(5 * time.Hour)})
	require.NoError(t, err)
	assert.Equal(t, changed, p.state())
	gitcheck.Repo(t, p.shadow)
	cps, _, err := s2.List()
	require.NoError(t, err)
	assert.Equal(t, "pre-wave-1,pre-wave-2,pre-wave-3,pre-restore-safety,pre-restore-safety", reasons(cps))
}

func TestCrashBetweenIndexAndPackLeavesAReadableRepository(t *testing.T) {
	t.Parallel()
	needGit(t)
	p := newTestProject(t)
	p.writeMany(60, 1)
	s := p.store()
	first, _, err := s.Create(CreateOptions{Reason: "pre-wave-1", Now: clockAt(time.Hour)})
	require.NoError(t, err)
	want := p.state()

	p.writeMany(60, 2)
	crash := errors.New("simulated crash")
	s.objects.afterIdx = func() error { return crash }
	_, _, err = s.Create(CreateOptions{Reason: "pre-wave-2", Now: clockAt(2 * time.Hour)})
	require.ErrorIs(t, err, crash)
	packs, idxs, others, _ := shadowFiles(t, p)
	assert.Len(t, packs, 1, "the second pack never got its name")
	assert.Len(t, idxs, 2, "its index did")
	assert.Empty(t, others, "temporary files are removed on the error path")

	// git and a fresh store both read the repository; the stat cache was not saved,
	// so the next checkpoint stores the files again.
	gitcheck.Repo(t, p.shadow)
	s2, err := Open(p.shadow, p.dir)
	require.NoError(t, err)
	cps, _, err := s2.List()
	require.NoError(t, err)
	assert.Equal(t, "pre-wave-1", reasons(cps))
	second, created, err := s2.Create(CreateOptions{Reason: "pre-wave-2", Now: clockAt(3 * time.Hour)})
	require.NoError(t, err)
	require.True(t, created)
	gitcheck.Repo(t, p.shadow)
	assert.Equal(t, "file 5 version 2", gitShadow(t, p, "cat-file", "-p", second.Hash.String()+":gen/d5/f005.txt"))
	_, err = s2.Restore(*first, RestoreOptions{Session: "1", Confirm: yes, Now: clockAt(4 * time.Hour)})
	require.NoError(t, err)
	assert.Equal(t, want, p.state())
}

func TestPackCountIsBounded(t *testing.T) {
	t.Parallel()
	p := newTestProject(t)
	p.writeMany(60, 1)
	s := p.store()
	s.objects.loadPacks()
	idx := emptyIdx(t)
	for len(s.objects.packList) < maxPacks {
		s.objects.packList = append(s.objects.packList, &packFile{path: filepath.Join(p.root, "none.pack"), idx: idx})
	}
	cp, _, err := s.Create(CreateOptions{Reason: "pre-wave-1", Now: clockAt(time.Hour)})
	require.NoError(t, err)
	packs, _, _, loose := shadowFiles(t, p)
	assert.Empty(t, packs, "at maxPacks packs, objects are written loose")
	assert.Greater(t, loose, 60)
	files, err := s.objects.readTreeFiles(cp.Tree)
	require.NoError(t, err)
	assert.Contains(t, files, "gen/d1/f008.txt")
}

func emptyIdx(t *testing.T) *idxfile.MemoryIndex {
	t.Helper()
	idx, err := batchIndex(&packBatch{entries: map[plumbing.Hash]packEntry{}}, plumbing.ZeroHash)
	require.NoError(t, err)
	return idx
}
