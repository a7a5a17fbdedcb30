package ab

import (
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/testkit/testtools"
)

// lcs is the textbook quadratic longest common subsequence, to check editDistance.
func lcs(a, b []int) int {
	dp := make([][]int, len(a)+1)
	for i := range dp {
		dp[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	return dp[0][0]
}

func TestEditDistanceIsMinimal(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(7))
	for range 500 {
		a := make([]int, rng.Intn(30))
		b := make([]int, rng.Intn(30))
		for i := range a {
			a[i] = rng.Intn(4)
		}
		for i := range b {
			b[i] = rng.Intn(4)
		}
		d, ok := editDistance(a, b, 1000)
		require.True(t, ok)
		assert.Equal(t, len(a)+len(b)-2*lcs(a, b), d, "a=%v b=%v", a, b)
	}
	_, ok := editDistance([]int{1, 2, 3}, []int{4, 5, 6}, 2)
	assert.False(t, ok, "over the limit")
}

func TestLineDelta(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, a, b string
		ins, del   int
	}{
		{"same", "a\nb\n", "a\nb\n", 0, 0},
		{"added file", "", "a\nb\nc", 3, 0},
		{"deleted file", "a\nb\n", "", 0, 2},
		{"change one", "a\nb\nc\n", "a\nB\nc\n", 1, 1},
		{"newline at end", "a\nb", "a\nb\n", 1, 1},
		{"insert middle", "a\nc\n", "a\nb\nc\n", 1, 0},
		{"crlf differs", "a\r\n", "a\n", 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ins, del := lineDelta([]byte(tt.a), []byte(tt.b))
			assert.Equal(t, tt.ins, ins)
			assert.Equal(t, tt.del, del)
			ids := map[string]int{}
			x, y := internLines(ids, tt.a), internLines(ids, tt.b)
			hi, hd := heuristicDelta(x, y)
			assert.Equal(t, ins-del, hi-hd, "the fallback agrees on the net change")
			assert.GreaterOrEqual(t, hi, ins, "the fallback never counts fewer lines")
		})
	}
}

// shortstat runs `git diff --shortstat from to` in dir, hermetically, and parses it.
func shortstat(t *testing.T, dir string, from, to plumbing.Hash) (files, ins, del int) {
	t.Helper()
	cmd := exec.Command("git", "diff", "--shortstat", from.String(), to.String())
	cmd.Dir = dir
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	m := regexp.MustCompile(`(\d+) files? changed(?:, (\d+) insertions?\(\+\))?(?:, (\d+) deletions?\(-\))?`).FindStringSubmatch(string(out))
	if m == nil {
		require.Empty(t, strings.TrimSpace(string(out)), "unparsed shortstat")
		return 0, 0, 0
	}
	n := func(s string) int {
		if s == "" {
			return 0
		}
		v, err := strconv.Atoi(s)
		require.NoError(t, err)
		return v
	}
	return n(m[1]), n(m[2]), n(m[3])
}

// artifactRepo builds a project repository with go-git whose commits exercise git's
// counting rules: added, deleted, modified, renamed-and-modified, binary,
// newline-at-end, mode-only and large rewritten files.
func artifactRepo(t *testing.T) (string, *git.Repository, []plumbing.Hash) {
	t.Helper()
	testtools.Git(t, "git binary not installed")
	dir := t.TempDir()
	repo, err := git.PlainInit(dir, false)
	require.NoError(t, err)
	wt, err := repo.Worktree()
	require.NoError(t, err)
	lines := func(prefix string, n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "%s line %d\n", prefix, i)
		}
		return b.String()
	}
	var hashes []plumbing.Hash
	commit := func(files map[string]string, modes map[string]os.FileMode, remove ...string) {
		for name, content := range files {
			p := filepath.Join(dir, name)
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		}
		for name, mode := range modes {
			require.NoError(t, os.Chmod(filepath.Join(dir, name), mode))
		}
		for _, name := range remove {
			_, err := wt.Remove(name)
			require.NoError(t, err)
		}
		require.NoError(t, wt.AddWithOptions(&git.AddOptions{All: true}))
		when := t0.Add(time.Duration(len(hashes)) * time.Hour)
		sig := &object.Signature{Name: "dev", Email: "dev@example.com", When: when}
		h, err := wt.Commit(fmt.Sprintf("commit %d", len(hashes)), &git.CommitOptions{Author: sig, Committer: sig})
		require.NoError(t, err)
		hashes = append(hashes, h)
	}
	commit(map[string]string{
		"a.txt": lines("a", 3), "b.txt": lines("b", 4), "m.txt": lines("m", 10), "bin.dat": "PK\x00\x01\x02binary\n",
		"old/r.txt": lines("r", 20), "nonl.txt": "x\ny", "exec.sh": "#!/bin/sh\necho hi\n", "big.txt": lines("big", 400),
	}, nil)
	m := strings.Replace(strings.Replace(lines("m", 10), "m line 3\n", "m line three\n", 1), "m line 7\n", "", 1) + "m line 10\n"
	r := strings.Replace(lines("r", 20), "r line 5\n", "r line five\n", 1)
	commit(map[string]string{
		"n.txt": lines("n", 5), "m.txt": m, "bin.dat": "PK\x00\x01\x03binary changed\n", "bin2.dat": "\x00\x00new binary",
		"new/r.txt": r, "nonl.txt": "x\ny\n", "big.txt": lines("big", 200) + lines("BIG", 300),
	}, map[string]os.FileMode{"exec.sh": 0o755}, "b.txt", "old/r.txt")
	commit(map[string]string{"a.txt": "", "deep/x/y/z.txt": lines("z", 2)}, nil, "bin.dat")
	return dir, repo, hashes
}

func TestArtifactDiffMatchesGit(t *testing.T) {
	t.Parallel()
	dir, repo, h := artifactRepo(t)
	pairs := [][2]plumbing.Hash{{h[0], h[1]}, {h[1], h[0]}, {h[1], h[2]}, {h[0], h[2]}, {h[2], h[0]}, {h[1], h[1]}}
	for _, p := range pairs {
		t.Run(p[0].String()[:7]+".."+p[1].String()[:7], func(t *testing.T) {
			got, err := ArtifactDiff(repo, p[0], p[1])
			require.NoError(t, err)
			files, ins, del := shortstat(t, dir, p[0], p[1])
			t.Logf("git: %d files, +%d -%d", files, ins, del)
			assert.Equal(t, [3]int{files, ins, del}, [3]int{got.FilesChanged, got.Insertions, got.Deletions})
			assert.Equal(t, p[0].String(), got.From)
			assert.Equal(t, p[1].String(), got.To)
		})
	}
	got, err := ArtifactDiff(repo, h[0], h[1])
	require.NoError(t, err)
	assert.Greater(t, got.FilesChanged, 8, "the fixture pair covers every kind of change")

	_, err = ArtifactDiff(repo, h[0], plumbing.NewHash("0123456789abcdef0123456789abcdef01234567"))
	assert.Error(t, err)
}

func internLines(ids map[string]int, s string) []int {
	var out []int
	for _, l := range splitLines([]byte(s)) {
		if _, ok := ids[l]; !ok {
			ids[l] = len(ids)
		}
		out = append(out, ids[l])
	}
	return out
}

// TestLineDeltaLargeFiles checks the large-file paths: a full rewrite (bounded at
// once), a reversed file (exact diff gives up, patience anchors count) and a file
// with scattered edits (exact).
func TestLineDeltaLargeFiles(t *testing.T) {
	t.Parallel()
	n := 20000
	if testing.Short() {
		n = 6000
	}
	var a, rewritten, reversed, edited strings.Builder
	for i := range n {
		fmt.Fprintf(&a, "line %d\n", i)
		fmt.Fprintf(&rewritten, "other %d\n", i)
		fmt.Fprintf(&reversed, "line %d\n", n-1-i)
		if i%100 == 0 {
			fmt.Fprintf(&edited, "changed %d\n", i)
		} else {
			fmt.Fprintf(&edited, "line %d\n", i)
		}
	}
	tests := []struct {
		name     string
		b        string
		ins, del int
	}{
		{"rewritten", rewritten.String(), n, n},
		{"reversed", reversed.String(), n - 1, n - 1},
		{"edited", edited.String(), n / 100, n / 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ins, del := lineDelta([]byte(a.String()), []byte(tt.b))
			assert.Equal(t, tt.ins, ins)
			assert.Equal(t, tt.del, del)
		})
	}
}
