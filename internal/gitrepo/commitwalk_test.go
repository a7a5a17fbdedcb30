package gitrepo

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/testkit/testtools"
)

// oddHistory builds, with the git binary, a history with ties in committer time,
// merges, zones, extra headers and a message without a final line end; repacked
// says whether it is then packed (all but the last commits, which stay loose).
func oddHistory(t *testing.T, repacked bool) (*git.Repository, plumbing.Hash) {
	t.Helper()
	testtools.Git(t, "the git binary builds the fixture")
	dir := t.TempDir()
	env := append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+dir, "GIT_CONFIG_NOSYSTEM=1")
	git1 := func(stdin string, args ...string) string {
		c := exec.Command("git", args...)
		c.Dir, c.Env, c.Stdin = dir, env, strings.NewReader(stdin)
		out, err := c.Output()
		require.NoError(t, err, "git %v", args)
		return strings.TrimSpace(string(out))
	}
	git1("", "init", "-q")
	tree := git1("", "hash-object", "-t", "tree", "-w", "--stdin")
	commit := func(parents []string, when, extra, msg string) string {
		body := "tree " + tree + "\n"
		for _, p := range parents {
			body += "parent " + p + "\n"
		}
		body += "author A <a@x> " + when + "\ncommitter C <c@x> " + when + "\n" + extra + "\n" + msg
		return git1(body, "hash-object", "-t", "commit", "-w", "--stdin")
	}
	var heads []string
	tip := commit(nil, "1700000000 +0000", "", "root\n")
	for i := 0; i < 40; i++ {
		when := fmt.Sprintf("%d +0130", 1700000000+(i/3)*60) // three commits a minute: ties
		extra := ""
		switch i % 7 {
		case 3:
			extra = "encoding ISO-8859-1\n"
		case 5:
			extra = "gpgsig -----BEGIN PGP SIGNATURE-----\n abc\n -----END PGP SIGNATURE-----\n"
		}
		msg := fmt.Sprintf("commit %d\n\nbody\n", i)
		if i%11 == 4 {
			msg = fmt.Sprintf("no line end %d", i)
		}
		parents := []string{tip}
		if i%5 == 0 && len(heads) > 0 {
			parents = append(parents, heads[len(heads)-1])
		}
		heads = append(heads, commit([]string{tip}, fmt.Sprintf("%d -0800", 1700000000+i*45), "", "side\n"))
		tip = commit(parents, when, extra, msg)
		if repacked && i == 30 {
			git1("", "update-ref", "refs/heads/main", tip)
			git1("", "repack", "-adq")
		}
	}
	repo, err := git.PlainOpen(dir)
	require.NoError(t, err)
	return repo, plumbing.NewHash(tip)
}

func TestWalkByCommitTimeIsGoGitsWalk(t *testing.T) {
	for _, repacked := range []bool{false, true} {
		t.Run(fmt.Sprintf("repacked=%v", repacked), func(t *testing.T) {
			repo, tip := oddHistory(t, repacked)
			var want []string
			c, err := object.GetCommit(repo.Storer, tip)
			require.NoError(t, err)
			require.NoError(t, object.NewCommitIterCTime(c, nil, nil).ForEach(func(c *object.Commit) error {
				want = append(want, fmt.Sprintf("%s %s %v %s %q", c.Hash, c.TreeHash, c.ParentHashes, c.Committer.When, c.Message))
				return nil
			}))
			var got []string
			require.NoError(t, WalkByCommitTime(repo, tip, func(c *CommitInfo) error {
				got = append(got, fmt.Sprintf("%s %s %v %s %q", c.Hash, c.Tree, c.Parents, c.When, c.Message))
				return nil
			}))
			require.Equal(t, want, got)
			src := newCommitSource(repo)
			defer src.close()
			lean := 0
			for _, w := range want {
				if src.lean(plumbing.NewHash(w[:40])) != nil {
					lean++
				}
			}
			if repacked { // the plain packed commits are read by the lean reader
				require.Greater(t, lean, 10)
			} else {
				require.Zero(t, lean)
			}
			n := 0
			require.NoError(t, WalkByCommitTime(repo, tip, func(*CommitInfo) error {
				if n++; n == 5 {
					return storer.ErrStop
				}
				return nil
			}))
			require.Equal(t, 5, n)
		})
	}
}

func TestWalkByCommitTimeMissingParent(t *testing.T) {
	repo, tip := oddHistory(t, true)
	st, ok := unwrapStorage(repo.Storer)
	require.True(t, ok)
	// Drop the loose objects: the packed commits' children are gone, and the walk
	// from the tip fails as go-git's does.
	require.NoError(t, os.RemoveAll(st.Filesystem().Join(st.Filesystem().Root(), "objects", tip.String()[:2])))
	err := WalkByCommitTime(repo, tip, func(*CommitInfo) error { return nil })
	_, want := object.GetCommit(repo.Storer, tip)
	require.Error(t, want)
	require.ErrorIs(t, err, plumbing.ErrObjectNotFound)
}

func TestParseCommitLeavesOddShapesToGoGit(t *testing.T) {
	h := plumbing.NewHash("0123456789abcdef0123456789abcdef01234567")
	tree := "tree " + h.String() + "\n"
	ok := tree + "parent " + h.String() + "\nauthor A <a> 1 +0000\ncommitter C <c> 2 +0200\n\nmsg\n"
	c := ParseCommit(h, []byte(ok))
	require.NotNil(t, c)
	require.Equal(t, "msg\n", c.Message)
	require.Equal(t, []plumbing.Hash{h}, c.Parents)
	require.Equal(t, int64(2), c.When.Unix())
	require.Equal(t, h, c.Tree)
	for _, odd := range []string{
		"",
		tree,
		"tree " + strings.ToUpper(h.String()) + "\nauthor A <a> 1 +0000\ncommitter C <c> 2 +0000\n\nm",
		tree + "parent  " + h.String() + "\nauthor A <a> 1 +0000\ncommitter C <c> 2 +0000\n\nm",
		tree + "committer C <c> 2 +0000\n\nm",
		tree + "author A <a> 1 +0000\ncommitter C <c> 2 +0000\nencoding x\n\nm",
		tree + "author A <a> 1 +0000\ncommitter C <c> 2 +0000",
		tree + "author A <a> 1 +0000\nparent " + h.String() + "\ncommitter C <c> 2 +0000\n\nm",
	} {
		require.Nil(t, ParseCommit(h, []byte(odd)), "%q", odd)
	}
}
