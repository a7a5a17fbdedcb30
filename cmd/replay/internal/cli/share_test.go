package cli_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/testkit/s3test"
)

// pulledScratch finds the scratch dir a pull printed.
var pulledScratch = regexp.MustCompile(`next: replay status \S+ --scratch (\S+)`)

// TestPushPullThenTheRunWorks: a run pushed to a directory store and pulled
// into a new directory gives the same status, plan and verify as the original,
// and an A/B replay of it with --agent recorded reuses the recordings the
// original's A/B replay made, calling nothing.
func TestPushPullThenTheRunWorks(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	repl := stricter(t, p, "stricter.md")
	ab := []string{"--mutate", "build-reviewer-prompt.md=" + repl, "--templates", p.Templates, "--yes", "--now", now(p)}
	r := s.Run(t, p.Project, append([]string{p.Scratch, "--agent", "builtin:sim"}, ab...)...)
	require.Equal(t, 0, r.Code, r.Stderr)

	storeDir := t.TempDir() // outside the fixture, whose digest must not change
	before := digest(t, p.Root)
	r = s.Run(t, p.Project, "push", p.Scratch, "--to", storeDir)
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Regexp(t, `^pushed run `+p.SessionID+`-[0-9a-f]{12} to `+regexp.QuoteMeta(storeDir)+`: \d+ files, \d+ objects, \d+ new objects`, r.Stdout)
	assert.Equal(t, before, digest(t, p.Root), "push changes nothing on disk")
	r = s.Run(t, p.Project, "push", p.Scratch, "--to", storeDir)
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, " 0 new objects")
	r = s.Run(t, p.Project, "push", p.Scratch, "--to", storeDir, "--json")
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, `"new_objects": 0,`)
	assert.Contains(t, r.Stdout, `"index_written": false,`)

	into := filepath.Join(s.Root, "pulled")
	r = s.Run(t, p.Project, "pull", storeDir, "--into", into)
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.NotContains(t, r.Stderr, "is not a git repository", "pulled inside the project's clone")
	elsewhere := t.TempDir()
	r2 := s.Run(t, elsewhere, "pull", storeDir, "--into", filepath.Join(elsewhere, "run"))
	require.Equal(t, 0, r2.Code, r2.Stderr)
	assert.Contains(t, r2.Stderr, "note: "+elsewhere+" is not a git repository: run the plan inside a clone of the project")
	m := pulledScratch.FindStringSubmatch(r.Stdout)
	require.NotNil(t, m, r.Stdout)
	scratch := m[1]
	require.True(t, strings.HasPrefix(scratch, into), scratch)

	for _, cmd := range [][]string{{"status", p.Project, "--scratch"}, {"plan"}, {"verify"}} {
		orig := s.Run(t, p.Project, append(cmd, p.Scratch, "--now", now(p))...)
		got := s.Run(t, p.Project, append(cmd, scratch, "--now", now(p))...)
		require.Equal(t, orig.Code, got.Code, "%v: %s", cmd, got.Stderr)
		assert.Equal(t, orig.Stdout, strings.ReplaceAll(got.Stdout, filepath.Dir(scratch), filepath.Dir(p.Scratch)), "%v on the pulled run", cmd)
	}
	// The side-effect objects travel inside the recordings: the replay needs no
	// refs/replay/effects/* in the project (a fresh clone has none) and the A/B
	// worktree, whose repository keeps them, was not pushed.
	dropEffectRefs(t, p.Project)
	wts, err := filepath.Glob(filepath.Join(scratch, "replay-worktrees", "*", ".git"))
	require.NoError(t, err)
	assert.Empty(t, wts, "no git worktree is pushed")
	abDirs, err := filepath.Glob(filepath.Join(scratch, "replay-worktrees", "*.ab"))
	require.NoError(t, err)
	assert.NotEmpty(t, abDirs, "the A/B recordings are pushed")
	r = s.Run(t, p.Project, append([]string{scratch, "--agent", "recorded"}, ab...)...)
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Regexp(t, `0 live, [1-9]\d* reused from recordings`, r.Stdout)
}

// TestPushPullBadInput: usage errors, a corrupt object, a non-empty
// destination and an S3 store that refuses the credentials are one error line
// each with their exit code, and nothing is written.
func TestPushPullBadInput(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	storeDir := t.TempDir()
	r := s.Run(t, p.Project, "push", p.Scratch, "--to", storeDir)
	require.Equal(t, 0, r.Code, r.Stderr)
	full := filepath.Join(s.Root, "full")
	require.NoError(t, os.MkdirAll(full, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(full, "mine.txt"), []byte("mine"), 0o644))
	srv := s3test.Start(t)
	srv.MakeBucket(t, "team-runs")
	before := digest(t, p.Root)

	cases := []struct {
		name string
		env  []string
		args []string
		code int
		says string
	}{
		{"push without --to", nil, []string{"push", p.Scratch}, 2, "push needs --to URL"},
		{"pull without --into", nil, []string{"pull", storeDir}, 2, "pull needs --into DIR"},
		{"unknown scheme", nil, []string{"push", p.Scratch, "--to", "ftp://x/y"}, 2, "unknown scheme"},
		{"non-empty destination", nil, []string{"pull", storeDir, "--into", full}, 2, "is not empty"},
		{"store directory missing for a pull", nil, []string{"pull", filepath.Join(s.Root, "nope"), "--into", filepath.Join(s.Root, "d2")}, 1, "no such directory"},
		{"no run at PATH", nil, []string{"push", filepath.Join(s.Root, "empty-dir-none"), "--to", storeDir}, 4, ""},
		{"bad run id", nil, []string{"pull", storeDir, "../../etc", "--into", filepath.Join(s.Root, "d")}, 1, "run id"},
		{"wrong credentials", []string{"AWS_ACCESS_KEY_ID=" + s3test.AccessKey, "AWS_SECRET_ACCESS_KEY=wrong-secret-456", "AWS_EC2_METADATA_DISABLED=true"},
			[]string{"push", p.Scratch, "--to", srv.URL("team-runs", "x")}, 1, "refused the credentials"},
		// The follow-up command names the store as given, endpoint and all, quoted for the shell.
		{"empty S3 store", append(srv.Env(), "AWS_EC2_METADATA_DISABLED=true"),
			[]string{"pull", srv.URL("team-runs", "none"), "--into", filepath.Join(s.Root, "d")}, 1,
			"push one with replay push PATH --to '" + srv.URL("team-runs", "none") + "'"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sb := *s
			sb.Env = c.env
			r := sb.Run(t, p.Project, c.args...)
			assert.Equal(t, c.code, r.Code, r.Stderr)
			assert.Equal(t, 1, countPrefixed(r.Stderr, "replay: "), "one error line: %q", r.Stderr)
			assert.Contains(t, r.Stderr, c.says)
			assert.NotContains(t, r.Stderr, "wrong-secret-456")
		})
	}

	// A corrupt object: the pull fails naming it and writes nothing.
	blobs, err := filepath.Glob(filepath.Join(storeDir, "blobs", "sha256", "*"))
	require.NoError(t, err)
	require.NotEmpty(t, blobs)
	require.NoError(t, os.WriteFile(blobs[0], []byte("bit rot"), 0o644))
	into := filepath.Join(s.Root, "pulled")
	r = s.Run(t, p.Project, "pull", storeDir, "--into", into)
	assert.Equal(t, 1, r.Code, r.Stderr)
	assert.Contains(t, r.Stderr, "does not match its sha256")
	assert.Contains(t, r.Stderr, filepath.Base(blobs[0]))
	_, err = os.Stat(into)
	assert.True(t, os.IsNotExist(err), "nothing written")
	assert.Equal(t, before, digest(t, p.Root))
	data, err := os.ReadFile(filepath.Join(full, "mine.txt"))
	require.NoError(t, err)
	assert.Equal(t, "mine", string(data))
}

// dropEffectRefs deletes the project's refs/replay/effects/* and returns how many there were.
func dropEffectRefs(t *testing.T, project string) int {
	t.Helper()
	repo, err := git.PlainOpen(project)
	require.NoError(t, err)
	iter, err := repo.References()
	require.NoError(t, err)
	var names []plumbing.ReferenceName
	require.NoError(t, iter.ForEach(func(r *plumbing.Reference) error {
		if strings.HasPrefix(r.Name().String(), "refs/replay/effects/") {
			names = append(names, r.Name())
		}
		return nil
	}))
	for _, n := range names {
		require.NoError(t, repo.Storer.RemoveReference(n))
	}
	return len(names)
}

// TestPulledRunWorksInACloneElsewhere: a teammate with another $HOME pulls the
// run inside their clone of the project at another path; the run is re-homed
// under that clone's <H> (a note says so), and plan and an A/B replay run from
// the clone as they do in the original project (never "belongs to another
// project").
func TestPulledRunWorksInACloneElsewhere(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	storeDir := t.TempDir()
	r := s.Run(t, p.Project, "push", p.Scratch, "--to", storeDir)
	require.Equal(t, 0, r.Code, r.Stderr)

	mate := NewSandbox(t)
	clone := filepath.Join(mate.Root, "work", "their-clone")
	_, err := git.PlainClone(clone, false, &git.CloneOptions{URL: p.Project})
	require.NoError(t, err)
	r = mate.Run(t, clone, "pull", storeDir, "--into", filepath.Join(mate.Root, "runs"))
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stderr, "note: the run was pushed from project folder")
	m := pulledScratch.FindStringSubmatch(r.Stdout)
	require.NotNil(t, m, r.Stdout)
	scratch := m[1]

	orig := s.Run(t, p.Project, "plan", p.Scratch, "--now", now(p))
	got := mate.Run(t, clone, "plan", scratch, "--now", now(p))
	require.Equal(t, orig.Code, got.Code, got.Stderr)
	assert.NotContains(t, got.Stderr, "belongs to another project")

	repl := stricter(t, p, "stricter.md")
	ab := []string{scratch, "--agent", "builtin:sim", "--mutate", "build-reviewer-prompt.md=" + repl, "--templates", p.Templates, "--yes", "--now", now(p)}
	r = mate.Run(t, clone, ab...)
	require.Equal(t, 0, r.Code, r.Stderr)
}

// abSession is the session an A/B replay announces.
var abSession = regexp.MustCompile(`A/B replay (\S+) runs in `)

// TestABOnAPulledRunNeverReusesASession: the session an A/B replay made on
// the first machine comes with the pulled run as its recordings
// (<session>.ab) and manifest lines, not as a worktree (never pushed); an A/B
// replay of the pulled run at the same second takes the next free id.
func TestABOnAPulledRunNeverReusesASession(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	repl := stricter(t, p, "stricter.md")
	ab := []string{"--agent", "builtin:sim", "--mutate", "build-reviewer-prompt.md=" + repl, "--templates", p.Templates, "--yes", "--now", now(p)}
	r := s.Run(t, p.Project, append([]string{p.Scratch}, ab...)...)
	require.Equal(t, 0, r.Code, r.Stderr)
	first := abSession.FindStringSubmatch(r.Stdout + r.Stderr)
	require.NotNil(t, first, r.Stdout+r.Stderr)

	storeDir := t.TempDir()
	r = s.Run(t, p.Project, "push", p.Scratch, "--to", storeDir)
	require.Equal(t, 0, r.Code, r.Stderr)
	r = s.Run(t, p.Project, "pull", storeDir, "--into", filepath.Join(s.Root, "pulled"))
	require.Equal(t, 0, r.Code, r.Stderr)
	m := pulledScratch.FindStringSubmatch(r.Stdout)
	require.NotNil(t, m, r.Stdout)
	scratch := m[1]
	_, err := os.Stat(filepath.Join(scratch, "replay-worktrees", first[1]))
	require.True(t, os.IsNotExist(err), "the worktree itself is not pushed: only the rule sees the session")

	r = s.Run(t, p.Project, append([]string{scratch}, ab...)...)
	require.Equal(t, 0, r.Code, r.Stderr)
	second := abSession.FindStringSubmatch(r.Stdout + r.Stderr)
	require.NotNil(t, second, r.Stdout+r.Stderr)
	assert.NotEqual(t, first[1], second[1], "a new session id")
	assert.Equal(t, first[1]+"-2", second[1])
}

// TestPulledRunUsedFromAnotherClone: a run pulled inside one clone (laid out
// for it) is used from a second clone at another path: the project guard
// accepts it by identity (the root commit the pull recorded), with a note,
// and an A/B replay runs there; a project with another history is still
// refused, exit 3, nothing written.
func TestPulledRunUsedFromAnotherClone(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	storeDir := t.TempDir()
	r := s.Run(t, p.Project, "push", p.Scratch, "--to", storeDir)
	require.Equal(t, 0, r.Code, r.Stderr)

	mate := NewSandbox(t)
	first := filepath.Join(mate.Root, "work", "clone-a")
	second := filepath.Join(mate.Root, "elsewhere", "clone-b")
	for _, dir := range []string{first, second} {
		_, err := git.PlainClone(dir, false, &git.CloneOptions{URL: p.Project})
		require.NoError(t, err)
	}
	r = mate.Run(t, first, "pull", storeDir, "--into", filepath.Join(mate.Root, "runs"))
	require.Equal(t, 0, r.Code, r.Stderr)
	m := pulledScratch.FindStringSubmatch(r.Stdout)
	require.NotNil(t, m, r.Stdout)
	scratch := m[1]

	repl := stricter(t, p, "stricter.md")
	ab := []string{scratch, "--agent", "builtin:sim", "--mutate", "build-reviewer-prompt.md=" + repl, "--templates", p.Templates, "--yes", "--now", now(p)}
	r = mate.Run(t, second, ab...)
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stderr, "is the same project (root commit")
	assert.NotContains(t, r.Stderr, "belongs to another project")

	other := anotherHistory(t, filepath.Join(mate.Root, "other-project"), p.Now)
	before := digest(t, other)
	r = mate.Run(t, other, ab...)
	assert.Equal(t, 3, r.Code, r.Stderr)
	assert.NotContains(t, r.Stderr, "is the same project")
	assert.Equal(t, before, digest(t, other), "nothing written into the other project")
}

// anotherHistory makes a git project at dir with one commit of its own: another
// root commit than any fixture's.
func anotherHistory(t *testing.T, dir string, when time.Time) string {
	t.Helper()
	repo, err := git.PlainInit(dir, false)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "x"), []byte("x\n"), 0o644))
	wt, err := repo.Worktree()
	require.NoError(t, err)
	_, err = wt.Add("x")
	require.NoError(t, err)
	_, err = wt.Commit("another history", &git.CommitOptions{Author: &object.Signature{Name: "a", Email: "a@b", When: when}})
	require.NoError(t, err)
	return dir
}

// TestCheckpointRestoreFromAnotherClone: `replay checkpoint restore` takes the
// project guard of every other command (pipeline.GuardShadowProject): a run
// pulled inside one clone has its checkpoint restored into a second clone at
// another path, accepted by identity with the note; a project with another
// history is refused, exit 3, nothing written into it.
func TestCheckpointRestoreFromAnotherClone(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	storeDir := t.TempDir()
	r := s.Run(t, p.Project, "push", p.Scratch, "--to", storeDir)
	require.Equal(t, 0, r.Code, r.Stderr)

	mate := NewSandbox(t)
	first := filepath.Join(mate.Root, "work", "clone-a")
	second := filepath.Join(mate.Root, "elsewhere", "clone-b")
	for _, dir := range []string{first, second} {
		_, err := git.PlainClone(dir, false, &git.CloneOptions{URL: p.Project})
		require.NoError(t, err)
	}
	r = mate.Run(t, first, "pull", storeDir, "--into", filepath.Join(mate.Root, "runs"))
	require.Equal(t, 0, r.Code, r.Stderr)
	m := pulledScratch.FindStringSubmatch(r.Stdout)
	require.NotNil(t, m, r.Stdout)
	scratch := m[1]
	firstBefore := digest(t, first)

	restore := []string{"checkpoint", "restore", "pre-wave-2", "--scratch", scratch, "--yes", "--now", now(p)}
	r = mate.Run(t, second, restore...)
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stderr, "is the same project (root commit")
	assert.Contains(t, r.Stderr, "restores only into "+second)
	assert.Contains(t, r.Stdout+r.Stderr, "Restoring the project directory "+second)
	assert.Equal(t, firstBefore, digest(t, first), "the clone the run was pulled into is not touched")

	other := anotherHistory(t, filepath.Join(mate.Root, "other-project"), p.Now)
	before := digest(t, other)
	r = mate.Run(t, other, restore...)
	assert.Equal(t, 3, r.Code, r.Stderr)
	assert.NotContains(t, r.Stderr, "is the same project")
	assert.NotContains(t, r.Stderr, "\n\n")
	assert.Equal(t, before, digest(t, other), "nothing written into the other project")
}
