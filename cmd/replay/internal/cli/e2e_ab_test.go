package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/fixture"
	"github.com/replaytool/replay/manifest"
)

// stricter writes a reviewer template with three more "must" checks than the
// original, which turn the simulated reviewer's verdict to FAIL.
func stricter(t *testing.T, p *fixture.Pipeline, name string) string {
	t.Helper()
	orig, err := os.ReadFile(filepath.Join(p.Templates, "build-reviewer-prompt.md"))
	require.NoError(t, err)
	path := filepath.Join(p.Root, name)
	extra := "\n## Stricter\n- Every function must have a test.\n- Errors must name the file.\n- No change must add a dependency.\n"
	require.NoError(t, os.WriteFile(path, append(orig, extra...), 0o644))
	return path
}

// userState is what an A/B replay must leave alone: a digest of the project tree
// (with .git) and the manifest's bytes.
type userState struct {
	project  string
	manifest []byte
}

func captureUserState(t *testing.T, p *fixture.Pipeline) userState {
	t.Helper()
	data, err := os.ReadFile(p.ManifestPath)
	require.NoError(t, err)
	return userState{project: digest(t, p.Project), manifest: data}
}

// assertUntouched checks the project is byte-identical and the original manifest
// bytes are still the manifest's first bytes (replays only append), except a torn
// last line, which the appender moves, byte for byte, to the sidecar beside it.
func assertUntouched(t *testing.T, p *fixture.Pipeline, before userState) {
	t.Helper()
	after := captureUserState(t, p)
	assert.Equal(t, before.project, after.project, "the user's tree and branch are untouched")
	whole := before.manifest
	if bytes.HasPrefix(after.manifest, whole) {
		return // nothing appended, or appended after a whole last line
	}
	if i := bytes.LastIndexByte(bytes.TrimRight(whole, "\n"), '\n'); i >= 0 && !json.Valid(bytes.TrimSpace(whole[i+1:])) {
		torn := bytes.TrimSpace(whole[i+1:])
		whole = whole[:i+1]
		side, err := os.ReadFile(filepath.Join(filepath.Dir(p.ManifestPath), manifest.TornSidecar))
		require.NoError(t, err)
		assert.True(t, bytes.Contains(side, append(torn, '\n')), "the torn line is kept in the sidecar")
	}
	assert.True(t, bytes.HasPrefix(after.manifest, whole), "the original manifest lines are untouched")
}

func TestABReplayWithDiff(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	repl := stricter(t, p, "stricter.md")
	before := captureUserState(t, p)

	r := s.Run(t, p.Project, p.Scratch, "--mutate", "build-reviewer-prompt.md="+repl, "--templates", p.Templates,
		"--diff", "--yes", "--agent", "builtin:sim", "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	assertUntouched(t, p, before)

	assertABManifest(t, p, repl)

	assert.Contains(t, r.Stdout, "# Replay Diff: 1775430161 vs ")
	assert.Regexp(t, `\| Acceptance tests +\| PASS +\| FAIL +\| changed`, r.Stdout)

	// The artifact diff is git's: same numbers as git diff --shortstat of the same commits.
	wt := filepath.Join(p.Scratch, "replay-worktrees", fmt.Sprint(p.Now.Unix()))
	mm := assertDiffIsGits(t, s, wt, r.Stdout)
	jsonl := assertDiffJSONL(t, p, mm)

	// replay diff renders the same comparison again, read-only.
	r2 := s.Run(t, p.Project, "diff", p.Scratch, "--now", now(p))
	require.Equal(t, 0, r2.Code, r2.Stderr)
	assert.Contains(t, r2.Stdout, mm[0])

	// An A/B replay is an experiment: the pipeline still resumes where it did, and
	// its resume runs the work live instead of reusing a response whose commit was
	// made in the isolated worktree.
	r3 := s.Run(t, p.Project, "plan", p.Scratch, "--now", now(p))
	require.Equal(t, 0, r3.Code, r3.Stderr)
	assert.Contains(t, r3.Stdout, "**Resume point:** Phase 3 boundary, wave 2")
	r4 := s.Run(t, p.Project, p.Scratch, "--yes", "--agent", "builtin:sim", "--now", now(p))
	require.Equal(t, 0, r4.Code, r4.Stderr)
	assert.Contains(t, r4.Stdout, "1 live, 0 reused from recordings")
	log, err := s.Git("-C", p.Project, "log", "-1", "--format=%s").Output()
	require.NoError(t, err)
	assert.Contains(t, string(log), "task 3", "the task-3 commit is in the project")

	// The branch head moved (restore, then a new commit): replay diff still compares
	// the two final commits recorded when the replay ran, with the same numbers.
	r5 := s.Run(t, p.Project, "diff", p.Scratch, "--now", now(p))
	require.Equal(t, 0, r5.Code, r5.Stderr)
	assert.Contains(t, r5.Stdout, mm[0])
	assert.Contains(t, string(jsonl), `"original_final_sha":"`+mm[1]+`","replay_final_sha":"`+mm[2]+`"`)

	// The replay worktree removed: its final commit cannot be read, the recorded
	// numbers are shown and the user is told.
	require.NoError(t, os.RemoveAll(wt))
	r6 := s.Run(t, p.Project, "diff", p.Scratch, "--now", now(p))
	require.Equal(t, 0, r6.Code, r6.Stderr)
	assert.Contains(t, r6.Stdout, mm[0])
	assert.Contains(t, r6.Stderr, "using the numbers recorded in")
}

func TestABReplayBadInput(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	repl := stricter(t, p, "stricter.md")
	before := digest(t, p.Root)
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"missing REPL", []string{"--mutate", "build-reviewer-prompt.md=" + filepath.Join(p.Root, "nope.md")}, 2, "nope.md"},
		{"malformed --mutate", []string{"--mutate", "build-reviewer-prompt.md"}, 2, "ORIG=REPL"},
		{"--diff without --mutate", []string{"--diff"}, 2, "--diff compares an A/B replay"},
		{"no agent", []string{"--mutate", "build-reviewer-prompt.md=" + repl}, 2, "--agent"},
		{"--template-ref naming no ref", []string{"--mutate", "build-reviewer-prompt.md=" + repl, "--templates", p.Templates, "--template-ref", "no-such-ref", "--agent", "builtin:sim"}, 2, "no-such-ref"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.Run(t, p.Project, append([]string{p.Scratch, "--now", now(p)}, tt.args...)...)
			assert.Equal(t, tt.code, r.Code, r.Stderr)
			assert.Contains(t, r.Stderr, tt.msg)
			assert.Equal(t, 1, countPrefixed(r.Stderr, "replay: "), "one error line")
		})
	}
	assert.Equal(t, before, digest(t, p.Root), "bad input writes nothing")

	// A mutation no dispatch uses is a warning, and the plan says so.
	other := filepath.Join(p.Root, "other.md")
	require.NoError(t, os.WriteFile(other, []byte("x"), 0o644))
	r := s.Run(t, p.Project, p.Scratch, "--mutate", "no-such-template.md="+other, "--agent", "builtin:sim", "--now", now(p))
	assert.Contains(t, r.Stderr, "no-such-template")
}

func TestTwoABReplaysRunConcurrently(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	a := stricter(t, p, "stricter-a.md")
	b := stricter(t, p, "stricter-b.md")
	require.NoError(t, os.WriteFile(b, []byte("Review the task.\n"), 0o644))
	before := captureUserState(t, p)

	var wg sync.WaitGroup
	results := make([]Result, 2)
	for i, repl := range []string{a, b} {
		wg.Add(1)
		go func(i int, repl string) {
			defer wg.Done()
			results[i] = s.Run(t, p.Project, p.Scratch, "--mutate", "build-reviewer-prompt.md="+repl, "--templates", p.Templates,
				"--diff", "--agent", "builtin:sim", "--now", now(p))
		}(i, repl)
	}
	wg.Wait()
	for _, r := range results {
		require.Equal(t, 0, r.Code, r.Stderr)
	}
	assertUntouched(t, p, before)

	m := readManifest(t, p)
	sessions := map[string][]int{}
	for _, e := range m.Entries {
		if e.ReplaySession != nil {
			sessions[*e.ReplaySession] = append(sessions[*e.ReplaySession], e.Seq)
			assert.Equal(t, []manifest.Status{manifest.StatusDispatched, manifest.StatusCompleted}, m.History[e.Seq], "seq %d", e.Seq)
		}
	}
	require.Len(t, sessions, 2, "two sessions, two worktrees")
	for sess, seqs := range sessions {
		assert.Len(t, seqs, 9, sess)
		_, err := os.Stat(filepath.Join(p.Scratch, "replay-worktrees", sess, ".git"))
		assert.NoError(t, err)
	}
	jsonl, err := os.ReadFile(filepath.Join(p.DurableDispatchDir, "replay-diff.jsonl"))
	require.NoError(t, err)
	assert.Equal(t, 2, strings.Count(string(jsonl), "\n"))
}

// countPrefixed counts the lines of s that start with prefix.
func countPrefixed(s, prefix string) int {
	n := 0
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n
}

func TestABReplayWithPinnedTemplates(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	// The skill's templates live in git; a reviewer template edited after the commit
	// must not reach the replay when it is pinned to the commit.
	for _, args := range [][]string{
		{"init", "-q"}, {"add", "."},
		{"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "templates"},
	} {
		out, err := s.Git(append([]string{"-C", p.Templates}, args...)...).CombinedOutput()
		require.NoError(t, err, string(out))
	}
	reviewer := filepath.Join(p.Templates, "build-reviewer-prompt.md")
	committed, err := os.ReadFile(reviewer)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(reviewer, append(append([]byte{}, committed...), "UNCOMMITTED EDIT\n"...), 0o644))
	cleanup := filepath.Join(p.Root, "cleanup-b.md")
	require.NoError(t, os.WriteFile(cleanup, []byte("Clean up the task; keep behaviour.\n"), 0o644))

	r := s.Run(t, p.Project, p.Scratch, "--mutate", "cleanup-prompt.md="+cleanup, "--templates", p.Templates,
		"--template-ref", "HEAD", "--agent", "builtin:sim", "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)

	m := readManifest(t, p)
	var sawReviewer, sawCleanup bool
	for _, e := range m.Entries {
		if e.ReplaySession == nil {
			continue
		}
		body, err := os.ReadFile(filepath.Join(p.DurableDispatchDir, e.File))
		require.NoError(t, err)
		switch e.Role {
		case "build-reviewer":
			sawReviewer = true
			assert.NotContains(t, string(body), "UNCOMMITTED EDIT", "pinned to the committed template")
			assert.Contains(t, string(body), strings.TrimSpace(string(committed)))
			assert.Contains(t, string(body), "## Context", "the injected context is kept")
		case "cleanup":
			sawCleanup = true
			assert.Contains(t, string(body), "Clean up the task; keep behaviour.")
			require.NotNil(t, e.Mutation)
		}
	}
	assert.True(t, sawReviewer && sawCleanup)
}

func TestABReplayWarnsAboutStaleTemplates(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	repl := stricter(t, p, "stricter.md")
	cleanup := filepath.Join(p.Templates, "cleanup-prompt.md")
	require.NoError(t, os.Chtimes(cleanup, p.Now, p.Now), "edited after the original run started")

	r := s.Run(t, p.Project, p.Scratch, "--mutate", "build-reviewer-prompt.md="+repl, "--templates", p.Templates,
		"--agent", "builtin:sim", "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stderr, "Warning: Template cleanup-prompt.md was modified after the original pipeline run. A/B comparison may be confounded by template changes unrelated to the mutation.")
	assert.NotContains(t, r.Stderr, "Template build-implementer-prompt.md was modified")
}

// assertABManifest checks the lines an A/B replay appended: all marked "ab", the two
// reviewers carry the mutation and the stricter verdict, the seven others none.
func assertABManifest(t *testing.T, p *fixture.Pipeline, repl string) {
	t.Helper()
	m := readManifest(t, p)
	var reviewers, others int
	for _, e := range m.Entries {
		if e.ReplaySession == nil {
			continue
		}
		assert.Equal(t, `"ab"`, string(e.Extra["replay_mode"]))
		if e.Role == "build-reviewer" {
			reviewers++
			require.NotNil(t, e.Mutation, "seq %d", e.Seq)
			assert.Equal(t, "build-reviewer-prompt.md -> "+repl, *e.Mutation)
			require.NotNil(t, e.Summary)
			assert.Contains(t, *e.Summary, "FAIL", "the stricter template changes the simulated verdict")
		} else {
			others++
			assert.Nil(t, e.Mutation, "seq %d", e.Seq)
		}
	}
	assert.Equal(t, 2, reviewers)
	assert.Equal(t, 7, others)
}

// assertDiffIsGits finds the artifact diff line in the replay diff on stdout and
// checks its numbers against git diff --shortstat of the same commits in the
// replay worktree wt; it returns the line's match (whole, two commits, files,
// insertions, deletions).
func assertDiffIsGits(t *testing.T, s *Sandbox, wt, stdout string) []string {
	t.Helper()
	re := regexp.MustCompile(`git diff ([0-9a-f]{40})\.\.([0-9a-f]{40})\n +(\d+) files? changed, \+(\d+)/-(\d+) lines`)
	mm := re.FindStringSubmatch(stdout)
	require.NotNil(t, mm, stdout)
	out, err := s.Git("-C", wt, "diff", "--shortstat", mm[1], mm[2]).Output()
	require.NoError(t, err)
	shortstat := string(out)
	assert.Contains(t, shortstat, mm[3]+" file")
	if mm[4] != "0" {
		assert.Contains(t, shortstat, mm[4]+" insertion")
	}
	if mm[5] != "0" {
		assert.Contains(t, shortstat, mm[5]+" deletion")
	}
	return mm
}

// assertDiffJSONL checks replay-diff.jsonl against the artifact diff match mm and
// returns the file's bytes.
func assertDiffJSONL(t *testing.T, p *fixture.Pipeline, mm []string) []byte {
	t.Helper()
	jsonl, err := os.ReadFile(filepath.Join(p.DurableDispatchDir, "replay-diff.jsonl"))
	require.NoError(t, err)
	var line struct {
		Type         string `json:"type"`
		ArtifactDiff struct {
			FilesChanged int `json:"files_changed"`
		} `json:"artifact_diff"`
		Outcome struct{ Original, Replayed string } `json:"outcome"`
	}
	require.NoError(t, json.Unmarshal(jsonl, &line))
	assert.Equal(t, "replay-diff", line.Type)
	assert.Equal(t, "FAIL", line.Outcome.Replayed)
	assert.Equal(t, mm[3], strconv.Itoa(line.ArtifactDiff.FilesChanged))
	return jsonl
}
