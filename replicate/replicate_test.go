package replicate

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/replaytool/replay/manifest"
	"github.com/replaytool/replay/pipeline"
	"github.com/replaytool/replay/resume"
	"github.com/replaytool/replay/stats"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDeterminism(t *testing.T) {
	t.Parallel()
	mode, share := determinism([]string{"a", "b", "b", "a", "b"})
	assert.Equal(t, "b", mode)
	assert.InDelta(t, 0.6, share, 1e-12)
	mode, share = determinism([]string{"x", "y"})
	assert.Equal(t, "x", mode, "the first of equally common outcomes")
	assert.InDelta(t, 0.5, share, 1e-12)
	_, share = determinism(nil)
	assert.Equal(t, 1.0, share)
}

func TestNoiseSeparatesNoiseFromEffect(t *testing.T) {
	t.Parallel()
	rep := func(arm string, passed bool, verdicts ...string) *Replica {
		r := &Replica{Arm: arm, Passed: passed}
		for i, v := range verdicts {
			r.Dispatches = append(r.Dispatches, DispatchMetric{ReplayOf: 10 + i, Role: "r", Status: "completed", Verdict: v})
		}
		return r
	}
	n := noiseOf([]*Replica{
		rep(Baseline, true, "PASS", "PASS"), rep(Mutated, false, "FAIL", "PASS"),
		rep(Baseline, true, "PASS", "FAIL"), rep(Mutated, false, "FAIL", "PASS"),
		rep(Baseline, false, "PASS", "PASS"), rep(Mutated, false, "FAIL", "PASS"),
	}, 0.05)
	assert.InDelta(t, 2.0/3, n.BaselineOutcome, 1e-12)
	assert.Equal(t, 1.0, n.MutatedOutcome)
	require.Len(t, n.Dispatches, 2)
	d := n.Dispatches[0]
	assert.Equal(t, "completed/FAIL", d.MutatedMode)
	assert.InDelta(t, 0.1, d.P, 1e-12, "Fisher: 3/3 against 0/3")
	assert.InDelta(t, 0.2, d.HolmP, 1e-12, "Holm over two dispatches")
	assert.False(t, d.Effect, "three replicas cannot show an effect at alpha 0.05 after Holm")
	assert.False(t, n.Dispatches[1].Effect, "a noisy baseline with the same usual outcome is noise")
	assert.InDelta(t, 2.0/3, n.Dispatches[1].Baseline, 1e-12)

	var many []*Replica
	for range 8 {
		many = append(many, rep(Baseline, true, "PASS", "PASS"), rep(Mutated, true, "FAIL", "PASS"))
	}
	n = noiseOf(append(many, rep(Baseline, true, "PASS")), 0.05)
	assert.True(t, n.Dispatches[0].Effect, "8 of 8 against 0 of 8 survives Holm")
	assert.Equal(t, 9, n.Dispatches[0].BaselineRuns)
	assert.Equal(t, 8, n.Dispatches[1].BaselineRuns)
}

func TestCheckCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	exe := filepath.Join(dir, "ok.sh")
	plain := filepath.Join(dir, "plain.sh")
	require.NoError(t, os.WriteFile(exe, []byte("#!/bin/sh\nexit 0\n"), 0o755))
	require.NoError(t, os.WriteFile(plain, []byte("#!/bin/sh\nexit 0\n"), 0o644))
	env := []string{"PATH=" + dir}
	for _, ok := range []string{"", "ok.sh --all", exe, "./ok.sh", "true", "FOO=1 ok.sh"} {
		assert.NoError(t, checkCommand(ok, dir, env), ok)
	}
	for _, bad := range []string{"plain.sh", plain, "./plain.sh", "./missing", "go test ./...", dir, "   "} {
		err := checkCommand(bad, dir, env)
		assert.ErrorIs(t, err, ErrBadOptions, bad)
	}
}

func TestRunCheckReportsTheExitStatus(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	code, out, err := runCheck(t.Context(), "pwd; exit 3", dir, nil)
	require.NoError(t, err)
	assert.Equal(t, 3, code)
	assert.Contains(t, out, filepath.Base(dir))
	code, out, err = runCheck(t.Context(), "yes | head -c 100000", dir, nil)
	require.NoError(t, err)
	assert.Equal(t, 0, code)
	assert.Len(t, out, maxCheckOutput, "only the end of a long output is kept")
}

func TestPerDispatchMedians(t *testing.T) {
	t.Parallel()
	rep := func(arm string, durs ...float64) *Replica {
		r := &Replica{Arm: arm}
		for i, d := range durs {
			r.Dispatches = append(r.Dispatches, DispatchMetric{ReplayOf: 5 + i, Role: "x", DurationS: d, InputChars: 10 * (i + 1), OutputChars: 3})
		}
		return r
	}
	got := perDispatch([]*Replica{rep(Baseline, 1, 2), rep(Mutated, 4), rep(Baseline, 3, 6), rep(Mutated, 8, 1)})
	require.Len(t, got, 2)
	assert.Equal(t, DispatchStats{ReplayOf: 5, Role: "x", BaselineRuns: 2, MutatedRuns: 2, BaselineDuration: 2, MutatedDuration: 6,
		BaselineInput: 10, MutatedInput: 10, BaselineOutput: 3, MutatedOutput: 3}, got[0])
	assert.Equal(t, 1, got[1].MutatedRuns, "a replica that stopped early did not re-run it")
	assert.Equal(t, 1.0, got[1].MutatedDuration)
}

// A replica is named to its agent by arm, index and pipeline, so the same
// replica of two pipelines of a corpus draws independently.
func TestReplicaNameCarriesThePipeline(t *testing.T) {
	a := &resume.Analysis{Pipeline: &pipeline.Pipeline{ProjectDir: "/x/proj-a", Location: &manifest.Location{SessionID: "s1"}}}
	b := &resume.Analysis{Pipeline: &pipeline.Pipeline{ProjectDir: "/y/proj-b", Location: &manifest.Location{SessionID: "s1"}}}
	moved := &resume.Analysis{Pipeline: &pipeline.Pipeline{ProjectDir: "/elsewhere/proj-a", Location: &manifest.Location{SessionID: "s1"}}}
	j := job{arm: Mutated, index: 2}
	assert.Equal(t, "mutated 2 of s1 proj-a", replicaName(j, a, ""))
	assert.NotEqual(t, replicaName(j, a, ""), replicaName(j, b, ""))
	assert.Equal(t, replicaName(j, a, ""), replicaName(j, moved, ""), "the project's path does not matter, its name does")
	same := &resume.Analysis{Pipeline: &pipeline.Pipeline{ProjectDir: "/z/proj-a", Location: &manifest.Location{SessionID: "s1"}}}
	assert.NotEqual(t, replicaName(j, a, "x/proj-a"), replicaName(j, same, "z/proj-a"), "a corpus's stratum names pipelines of one name apart")
	assert.Equal(t, "mutated 2 of s1 x/proj-a", replicaName(j, a, "x/proj-a"))
}

// TestMeasureComparesEachReplicaOnce: a replica already compared with the
// original run (in this process, or recorded by the run a continuation
// extends) is not compared again at the next look; one that was not is.
func TestMeasureComparesEachReplicaOnce(t *testing.T) {
	t.Parallel()
	pl := &pipeline.Pipeline{Location: &manifest.Location{SessionID: "1"}, Manifest: &manifest.Manifest{}}
	r := Request{Metric: MetricDuration, Rule: stats.DefaultRule()}
	r.AB.Reload = func() (*pipeline.Pipeline, error) { return pl, nil }
	reps := []*Replica{
		{Arm: Baseline, Index: 1, Session: "not-in-the-run", Passed: true, DurationS: 3, measured: true},
		{Arm: Mutated, Index: 1, Session: "not-in-the-run", Passed: false, DurationS: 2, measured: true},
	}
	res := &Result{}
	require.NoError(t, measure(r, res, reps), "measured replicas are taken as they are")
	assert.Equal(t, 1, res.Decision.BaselinePass.Passed)
	assert.Equal(t, 0, res.Decision.MutatedPass.Passed)
	assert.False(t, reps[1].Passed, "kept, not recomputed")

	more := append(reps, &Replica{Arm: Baseline, Index: 2, Session: "not-in-the-run"}, &Replica{Arm: Mutated, Index: 2, Session: "not-in-the-run"})
	err := measure(r, &Result{}, more)
	require.Error(t, err, "a new replica is compared with the original run")
	assert.Contains(t, err.Error(), "replica 2")
}
