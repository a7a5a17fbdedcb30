package ab

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/agent"
	"github.com/replaytool/replay/internal/fixture"
	"github.com/replaytool/replay/internal/testkit/e2ekit"
	"github.com/replaytool/replay/manifest"
	"github.com/replaytool/replay/mutate"
	"github.com/replaytool/replay/pipeline"
	"github.com/replaytool/replay/redispatch"
	"github.com/replaytool/replay/resume"
)

// request is an A/B replay request on fixture p with the caller's steps done the
// way the command does them, minus the terminal.
func request(p *fixture.Pipeline, muts []string, ag agent.Agent, diff bool) Request {
	load := func() (*pipeline.Pipeline, error) {
		return pipeline.Load(pipeline.Options{Path: p.Scratch, Home: p.Home, Tmp: p.Tmp, SysTmp: p.SysTmp, Cwd: p.Project})
	}
	now := func() time.Time { return p.Now }
	return Request{
		Mutations: muts, Cwd: p.Root, Templates: p.Templates, Tmp: p.Tmp, Diff: diff, Agent: ag,
		Decide: func(mustRedo func(*pipeline.Dispatch) bool) (*resume.Analysis, time.Time, error) {
			pl, err := load()
			if err != nil {
				return nil, time.Time{}, err
			}
			a, err := resume.DecideFor(pl, "", 0, p.Now, mustRedo)
			return a, p.Now, err
		},
		Preflight: func(a *resume.Analysis, muts []mutate.Mutation) error {
			return resume.RunPreflight(a, resume.PreflightOptions{Templates: p.Templates, Redispatch: true, Mutations: muts}).Err
		},
		Redispatch: func(a *resume.Analysis, ag agent.Agent, store *agent.Store, o redispatch.Options) (*redispatch.Report, error) {
			o.Runner, o.Jobs, o.Now = &agent.Runner{Agent: ag, Store: store}, 1, now
			return redispatch.Run(context.Background(), a, o)
		},
		Reload: load,
	}
}

func TestRunReplaysInAWorktreeAndWritesTheDiff(t *testing.T) {
	p := e2ekit.Hermetic(t)
	orig, err := os.ReadFile(filepath.Join(p.Templates, "build-reviewer-prompt.md"))
	require.NoError(t, err)
	repl := filepath.Join(p.Root, "stricter.md")
	extra := "\n## Stricter\n- Every function must have a test.\n- Errors must name the file.\n- No change must add a dependency.\n"
	require.NoError(t, os.WriteFile(repl, append(orig, extra...), 0o644))
	before, err := os.ReadFile(p.ManifestPath)
	require.NoError(t, err)
	projectBefore, err := fixture.Digest(p.Project)
	require.NoError(t, err)

	ag, err := agent.New(agent.SpecSim, agent.Options{})
	require.NoError(t, err)
	var info []string
	r := request(p, []string{"build-reviewer-prompt.md=" + repl}, ag, true)
	r.Info = func(s string) { info = append(info, s) }
	res, err := Run(r)
	require.NoError(t, err)

	require.NotNil(t, res.Worktree)
	assert.Equal(t, filepath.Join(p.Scratch, WorktreesDir, res.Worktree.Session), res.Worktree.Dir)
	assert.Equal(t, []string{"build-reviewer-prompt.md -> " + repl}, res.Mutations)
	require.NotNil(t, res.Report)
	assert.Empty(t, res.Report.Stopped)
	require.NotNil(t, res.Diff)
	assert.Contains(t, res.Diff.Markdown, "# Replay Diff: ")
	written, err := os.ReadFile(res.Diff.MarkdownPath)
	require.NoError(t, err)
	assert.Equal(t, res.Diff.Markdown, string(written))
	jsonl, err := os.ReadFile(res.Diff.JSONLPath)
	require.NoError(t, err)
	assert.Equal(t, string(res.Diff.Line)+"\n", string(jsonl))
	assert.Contains(t, strings.Join(info, ""), "your working tree is not touched")

	after, err := os.ReadFile(p.ManifestPath)
	require.NoError(t, err)
	assert.True(t, bytes.HasPrefix(after, e2ekit.WithoutTornTail(before)), "the original manifest lines are untouched (a torn last line moves to its sidecar)")
	m, err := manifest.Read(p.ManifestPath)
	require.NoError(t, err)
	var mutated int
	for _, e := range m.Entries {
		if e.ReplaySession != nil && e.Mutation != nil {
			mutated++
			assert.Equal(t, pipeline.ReplayModeAB, string(e.Extra[pipeline.ReplayModeKey]))
		}
	}
	assert.Equal(t, 2, mutated, "both build reviewers ran with the stricter template")
	projectAfter, err := fixture.Digest(p.Project)
	require.NoError(t, err)
	assert.Equal(t, projectBefore, projectAfter, "the user's tree and branch are untouched")
}

func TestRunRefusesBeforeWriting(t *testing.T) {
	p := e2ekit.Hermetic(t)
	repl := filepath.Join(p.Root, "stricter.md")
	require.NoError(t, os.WriteFile(repl, []byte("stricter\n"), 0o644))
	before, err := fixture.Digest(p.Root)
	require.NoError(t, err)

	_, err = Run(request(p, []string{"build-reviewer-prompt.md"}, nil, false))
	assert.ErrorContains(t, err, "ORIG=REPL", "a bad --mutate is reported before the missing agent")
	_, err = Run(request(p, []string{"build-reviewer-prompt.md=" + repl}, nil, false))
	assert.ErrorIs(t, err, ErrBadOptions)
	assert.ErrorContains(t, err, "--agent")
	ag, err := agent.New(agent.SpecSim, agent.Options{})
	require.NoError(t, err)
	r := request(p, []string{"build-reviewer-prompt.md=" + repl}, ag, false)
	r.TemplateRef, r.Templates = "v1", ""
	_, err = Run(r)
	assert.ErrorIs(t, err, ErrBadOptions)
	assert.ErrorContains(t, err, "give --templates DIR too")

	after, err := fixture.Digest(p.Root)
	require.NoError(t, err)
	assert.Equal(t, before, after, "nothing written")
}

func TestRunBaselineReplaysTheSameDispatchesUnchanged(t *testing.T) {
	p := e2ekit.Hermetic(t)
	orig, err := os.ReadFile(filepath.Join(p.Templates, "build-reviewer-prompt.md"))
	require.NoError(t, err)
	repl := filepath.Join(p.Root, "stricter.md")
	extra := "\n## Stricter\n- Every function must have a test.\n- Errors must name the file.\n- No change must add a dependency.\n"
	require.NoError(t, os.WriteFile(repl, append(orig, extra...), 0o644))
	ag, err := agent.New(agent.SpecSim, agent.Options{})
	require.NoError(t, err)
	muts := []string{"build-reviewer-prompt.md=" + repl}

	mutated, err := Run(request(p, muts, ag, false))
	require.NoError(t, err)
	r := request(p, muts, ag, false)
	r.Baseline = true
	baseline, err := Run(r)
	require.NoError(t, err)

	require.NotNil(t, baseline.Worktree)
	assert.NotEqual(t, mutated.Worktree.Session, baseline.Worktree.Session)
	require.Len(t, baseline.Report.Outcomes, len(mutated.Report.Outcomes), "the same dispatches, from the same checkpoint")
	for i, oc := range baseline.Report.Outcomes {
		assert.Equal(t, mutated.Report.Outcomes[i].Original.Seq, oc.Original.Seq)
		assert.Empty(t, oc.Mutation, "the baseline's bodies are not mutated")
		if oc.Original.Role == "build-reviewer" {
			assert.Equal(t, "PASS", oc.Response.Verdict, "the current template passes")
			assert.Equal(t, "FAIL", mutated.Report.Outcomes[i].Response.Verdict, "the stricter one fails")
		}
	}
}
