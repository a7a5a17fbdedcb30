package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/fork"
	"github.com/replaytool/replay/internal/fixture"
)

// parentDigest digests everything of the parent run a fork must never write: the
// project with its .git, the shadow repository, both dispatch dirs and every file
// of the scratch dir but the forks' own folder.
func parentDigest(t *testing.T, p *fixture.Pipeline) string {
	t.Helper()
	var b strings.Builder
	for _, dir := range []string{p.Project, p.Shadow, p.LiveDispatchDir, p.DurableDispatchDir} {
		b.WriteString(dir + "=" + digest(t, dir) + "\n")
	}
	ents, err := os.ReadDir(p.Scratch)
	require.NoError(t, err)
	for _, e := range ents {
		if e.Name() == fork.ForksDir {
			continue
		}
		path := filepath.Join(p.Scratch, e.Name())
		if e.IsDir() {
			b.WriteString(path + "=" + digest(t, path) + "\n")
			continue
		}
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		b.WriteString(path + "=" + string(data) + "\n")
	}
	return b.String()
}

// verdictFile writes a reviewer response that fails the task.
func verdictFile(t *testing.T, p *fixture.Pipeline) string {
	t.Helper()
	path := filepath.Join(p.Root, "verdict-fail.txt")
	require.NoError(t, os.WriteFile(path, []byte("Review of task 1\nVERDICT: FAIL\nSUMMARY: Task 1 rejected: login form accepts empty passwords\n"), 0o644))
	return path
}

type forkJSON struct {
	fork.Record
	Dir      string `json:"dir"`
	Worktree string `json:"worktree_dir"`
}

func runFork(t *testing.T, s *Sandbox, p *fixture.Pipeline, args ...string) forkJSON {
	t.Helper()
	r := s.Run(t, p.Project, append([]string{"fork", "--json", "--now", now(p)}, args...)...)
	require.Equal(t, 0, r.Code, r.Stderr)
	var out forkJSON
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &out), r.Stdout)
	return out
}

func TestForkWithSubstitution(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	before := parentDigest(t, p)
	verdict := verdictFile(t, p)

	child := runFork(t, s, p, p.Scratch, "--at", "15", "--substitute", "15="+verdict, "--reason", "reviewer fails task 1")
	assert.Equal(t, before, parentDigest(t, p), "the parent's files are never written")
	assert.Equal(t, p.SessionID, child.Parent)
	assert.Equal(t, p.SessionID, child.Root)
	assert.Equal(t, 15, child.ForkSeq)
	assert.Equal(t, "reviewer fails task 1", child.Reason)
	require.Len(t, child.Substitutions, 1)
	assert.Len(t, child.Substitutions[0].SHA256, 64)
	assert.Equal(t, filepath.Join(p.Scratch, fork.ForksDir, child.Session), child.Dir)

	// The lineage record on disk is the one printed; the child's manifest holds only its own entry.
	rec, err := fork.ReadRecord(child.Dir)
	require.NoError(t, err)
	assert.Equal(t, child.Record, *rec)
	own, err := os.ReadFile(filepath.Join(child.Dir, fork.ManifestFile))
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(string(own), "\n"))
	assert.Contains(t, string(own), `"seq":15`)
	assert.Contains(t, string(own), "rejected")
	// The substituted response is the child's recording for seq 15.
	recs, err := filepath.Glob(filepath.Join(child.Dir, "responses", "*.json"))
	require.NoError(t, err)
	assert.Len(t, recs, 1)
	// The worktree holds the checkpoint in effect at seq 15 (pre-wave-1: no task code yet).
	require.NotEmpty(t, child.Worktree)
	assert.FileExists(t, filepath.Join(child.Worktree, "docs", "design.md"))
	assert.NoFileExists(t, filepath.Join(child.Worktree, "internal", "login", "form.go"))

	// The state of a fork below its fork seq is its parent's; from it on it is refused.
	r := s.Run(t, p.Project, "state", child.Dir, "--at", "14")
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "# State at seq 14")
	r = s.Run(t, p.Project, "state", child.Dir, "--at", "15")
	assert.Equal(t, 2, r.Code)
	assert.Contains(t, r.Stderr, "give --at below 15")

	// A fork of the fork, then deleting the first child never touches the parent.
	grand := runFork(t, s, p, child.Dir, "--at", "17")
	assert.Equal(t, child.Session, grand.Parent)
	assert.Equal(t, p.SessionID, grand.Root)
	assert.NotEqual(t, child.Session, grand.Session)
	require.NoError(t, os.RemoveAll(child.Dir))
	assert.Equal(t, before, parentDigest(t, p), "deleting a child never touches the parent")
}

func TestForkBadInput(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	verdict := verdictFile(t, p)
	before := digest(t, p.Root)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"at past the end", []string{p.Scratch, "--at", "20"}, "give a seq from 1 to 19"},
		{"at below 1", []string{p.Scratch, "--at", "0"}, "give a seq from 1 to 19"},
		{"substitution before the fork", []string{p.Scratch, "--at", "15", "--substitute", "14=" + verdict}, "outside the child: give a seq from 15 (the fork seq) to 19"},
		{"missing file", []string{p.Scratch, "--at", "15", "--substitute", "15=" + filepath.Join(p.Root, "nope.txt")}, "give an existing file"},
		{"bad value", []string{p.Scratch, "--at", "15", "--substitute", "fifteen"}, "write SEQ=FILE"},
		{"unknown run", []string{filepath.Join(p.Scratch, fork.ForksDir, "nosuch"), "--at", "15"}, "is not a fork"},
		{"no --at", []string{p.Scratch}, "give --at SEQ"},
	}
	for _, c := range cases {
		r := s.Run(t, p.Project, append([]string{"fork", "--now", now(p)}, c.args...)...)
		assert.Equal(t, 2, r.Code, c.name+": "+r.Stderr)
		assert.Contains(t, r.Stderr, c.want, c.name)
	}
	assert.Equal(t, before, digest(t, p.Root), "nothing was written")
}

func TestLineageTree(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	verdict := verdictFile(t, p)
	// An A/B session in the manifest, then a fork and a fork of the fork.
	r := s.Run(t, p.Project, p.Scratch, "--mutate", "build-reviewer-prompt.md="+stricter(t, p, "stricter.md"), "--templates", p.Templates,
		"--yes", "--agent", "builtin:sim", "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	child := runFork(t, s, p, p.Scratch, "--at", "15", "--substitute", "15="+verdict, "--reason", "reviewer fails task 1")
	grand := runFork(t, s, p, child.Dir, "--at", "17", "--reason", "later")
	before := digest(t, p.Root)

	r = s.Run(t, p.Project, "lineage", p.Scratch)
	require.Equal(t, 0, r.Code, r.Stderr)
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	require.Len(t, lines, 4, r.Stdout)
	assert.Equal(t, p.SessionID+" original run (19 dispatches)", lines[0])
	assert.Regexp(t, `^\|-- \S+ A/B replay from seq \d+ \(\d+ dispatches\)$`, lines[1])
	assert.NotContains(t, lines[1], child.Session+" ", "a fork never takes the session id of an A/B replay")
	assert.Equal(t, "`-- "+child.Session+" fork at seq 15, substitutes seq 15: reviewer fails task 1", lines[2])
	assert.Equal(t, "    `-- "+grand.Session+" fork at seq 17: later", lines[3])

	r = s.Run(t, p.Project, "lineage", grand.Dir, "--json")
	require.Equal(t, 0, r.Code, r.Stderr)
	var tree fork.Node
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &tree))
	require.Len(t, tree.Children, 2)
	assert.Equal(t, fork.KindAB, tree.Children[0].Kind)
	f := tree.Children[1]
	assert.Equal(t, child.Session, f.Session)
	assert.Equal(t, []int{15}, f.Substitutions)
	require.Len(t, f.Children, 1)
	assert.Equal(t, 17, f.Children[0].At)
	assert.Equal(t, before, digest(t, p.Root), "lineage writes nothing")
}

func TestDiffForkAgainstParent(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	verdict := verdictFile(t, p)
	child := runFork(t, s, p, p.Scratch, "--at", "15", "--substitute", "15="+verdict)
	before := digest(t, p.Root)

	r := s.Run(t, p.Project, "diff", p.Scratch, child.Dir, "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "# Replay Diff: "+p.SessionID+" vs "+child.Session)
	assert.Regexp(t, `\| Acceptance tests +\| PASS +\| FAIL +\| changed`, r.Stdout)
	assert.Contains(t, r.Stdout, "- Seq 15 (build-reviewer, phase 3, task 1), replayed as seq 20: completed → completed (summary differs)")
	assert.Contains(t, r.Stdout, "- Downstream: seq 16 build-reviewer (task 2), seq 17 adversarial-tester (task 1)")
	r2 := s.Run(t, p.Project, "diff", p.Scratch, child.Session, "--now", now(p))
	require.Equal(t, 0, r2.Code, r2.Stderr)
	assert.Equal(t, r.Stdout, r2.Stdout, "a session id names the same run as its directory")

	r3 := s.Run(t, p.Project, "diff", p.Scratch, "--overlay", "15="+verdict, "--now", now(p))
	require.Equal(t, 0, r3.Code, r3.Stderr)
	assert.Contains(t, r3.Stdout, "# Replay Diff: "+p.SessionID+" vs overlay")
	assert.Contains(t, r3.Stdout, "Replayed: Verdict FAIL. Task 1 rejected")

	for _, c := range [][]string{
		{"diff", p.Scratch, "nosuch"},
		{"diff", p.Scratch, "--overlay", "0=" + verdict},
		{"diff", p.Scratch, "--overlay", "15=" + filepath.Join(p.Root, "missing.txt")},
		{"diff", p.Scratch, p.SessionID},
	} {
		r := s.Run(t, p.Project, c...)
		assert.Equal(t, 2, r.Code, strings.Join(c, " ")+": "+r.Stderr)
	}
	r4 := s.Run(t, p.Project, "diff", p.Scratch, "nosuch")
	assert.Contains(t, r4.Stderr, "known runs: "+p.SessionID+" (original), "+child.Session)
	assert.Equal(t, before, digest(t, p.Root), "diff writes nothing")
}

func TestPlanOverlay(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	verdict := verdictFile(t, p)
	before := digest(t, p.Root)

	r := s.Run(t, p.Project, "plan", p.Scratch, "--json", "--overlay", "15="+verdict, "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "overlay: 15="+verdict)
	assert.Contains(t, r.Stdout, "Task 1 rejected")
	plain := s.Run(t, p.Project, "plan", p.Scratch, "--json", "--now", now(p))
	require.Equal(t, 0, plain.Code, plain.Stderr)
	assert.NotContains(t, plain.Stdout, "Task 1 rejected")

	bad := s.Run(t, p.Project, "plan", p.Scratch, "--overlay", "99="+verdict, "--now", now(p))
	assert.Equal(t, 2, bad.Code)
	assert.Contains(t, bad.Stderr, "give a seq from 1 to 19")
	assert.Equal(t, before, digest(t, p.Root), "an overlay writes nothing")
}

func TestForkRunsLaterDispatches(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	verdict := verdictFile(t, p)
	before := parentDigest(t, p)

	child := runFork(t, s, p, p.Scratch, "--at", "15", "--substitute", "15="+verdict, "--agent", "builtin:sim", "--templates", p.Templates)
	assert.Equal(t, before, parentDigest(t, p), "a fork's dispatches never write the parent's files")
	own, err := os.ReadFile(filepath.Join(child.Dir, fork.ManifestFile))
	require.NoError(t, err)
	for _, of := range []string{`"replay_of":16`, `"replay_of":17`, `"replay_of":18`, `"replay_of":19`} {
		assert.Contains(t, string(own), of)
	}
	assert.NotContains(t, string(own), `"replay_of":15,"replay_session":"`+child.Session+`","replay_mode"`, "the substituted seq keeps its answer")

	r := s.Run(t, p.Project, "diff", p.Scratch, child.Session, "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "- Seq 15 (build-reviewer, phase 3, task 1)")
	assert.NotContains(t, r.Stdout, "not re-run", "every later dispatch ran in the fork")
	// The artifact diff is git's, between the original run's tip and the fork's worktree HEAD.
	mm := assertDiffIsGits(t, s, child.Worktree, r.Stdout)
	assert.Equal(t, p.Commits["task3-partial"].String(), mm[1])

	// From recordings: a fork of the fork at 17 with the recorded agent reuses the
	// responses its parent recorded, and calls nothing.
	r = s.Run(t, p.Project, "fork", child.Dir, "--at", "17", "--agent", "recorded", "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stderr, "3 dispatches re-run (3 from recordings, 0 live, 0 failed)")

	// The original run has no recordings: the recorded agent stops, exit 1, the fork is kept.
	r = s.Run(t, p.Project, "fork", p.Scratch, "--at", "16", "--agent", "recorded", "--now", now(p))
	assert.Equal(t, 1, r.Code)
	assert.Contains(t, r.Stderr, "no recorded response")
	assert.Equal(t, before, parentDigest(t, p))
}

// TestUnknownRunIsAUsageError: fork, state and lineage on a path that names no
// run exit 2 (a bad argument), not 4 (a run that cannot be resumed), and write
// nothing.
func TestUnknownRunIsAUsageError(t *testing.T) {
	t.Parallel()
	s := NewSandbox(t)
	missing := filepath.Join(s.Root, "no-such-run")
	for _, args := range [][]string{
		{"fork", missing, "--at", "2"},
		{"state", missing, "--at", "2"},
		{"lineage", missing},
	} {
		r := s.Run(t, s.Root, args...)
		assert.Equal(t, 2, r.Code, "%v: %s", args, r.Stderr)
		assert.Contains(t, r.Stderr, "Manifest not found", args)
		assert.NoFileExists(t, missing)
	}
}
