package agent

import (
	"context"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/manifest"
)

func TestParseSimSpec(t *testing.T) {
	t.Parallel()
	st, err := ParseSimSpec("builtin:sim")
	require.NoError(t, err)
	assert.Nil(t, st)
	st, err = ParseSimSpec(" builtin:sim?flake=0.3&seed=7 ")
	require.NoError(t, err)
	assert.Equal(t, &SimStochastic{Flake: 0.3, Seed: 7}, st)
	assert.Equal(t, "builtin:sim?flake=0.3&seed=7", st.String())
	for spec, want := range map[string]string{
		"builtin:sim?flake=1.5":         "flake=\"1.5\" is not a rate",
		"builtin:sim?flake=NaN":         "not a rate",
		"builtin:sim?seed=-1":           "seed=\"-1\" is not a whole number",
		"builtin:sim?speed=2":           "unknown parameter \"speed\"",
		"builtin:sim?seed=1&seed=2":     "seed is given 2 times",
		"builtin:simulator":             "not a builtin:sim spec",
		"builtin:sim?flake=%zz":         "give builtin:sim?flake=0.3&seed=7",
		"builtin:sim?flake=0.1&seed=1x": "seed=\"1x\"",
	} {
		_, err := ParseSimSpec(spec)
		require.Error(t, err, spec)
		assert.Contains(t, err.Error(), want, spec)
		_, err = New(spec, Options{})
		if spec != "builtin:simulator" {
			assert.Error(t, err, spec)
		}
	}
}

func FuzzParseSimSpec(f *testing.F) {
	for _, s := range []string{"builtin:sim", "builtin:sim?flake=0.3&seed=7", "builtin:sim?flake=", "builtin:sim?%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		st, err := ParseSimSpec(spec)
		if err != nil || st == nil {
			return
		}
		if st.Flake < 0 || st.Flake > 1 {
			t.Fatalf("%q: flake %v out of [0, 1]", spec, st.Flake)
		}
		again, err := ParseSimSpec(st.String())
		if err != nil || *again != *st {
			t.Fatalf("%q: %s does not parse back: %v", spec, st, err)
		}
	})
}

func simRun(t *testing.T, spec string, req Request) Response {
	t.Helper()
	a, err := New(spec, Options{})
	require.NoError(t, err)
	resp, err := a.Run(context.Background(), req)
	require.NoError(t, err)
	return resp
}

func TestSimStochasticIsSeededPerSession(t *testing.T) {
	t.Parallel()
	const spec = "builtin:sim?flake=0.5&seed=7"
	req := newRequest(t, 30, "gate", "build-gate", nil, "Check the build.\n", false)
	first := simRun(t, spec, req)
	assert.Equal(t, first, simRun(t, spec, req), "same seed and session, same response")
	assert.Equal(t, spec, first.Agent)

	fails, durations := 0, map[float64]bool{}
	for i := range 40 {
		req.Session = "17754301" + strconv.Itoa(10+i)
		resp := simRun(t, spec, req)
		require.Equal(t, manifest.StatusCompleted, resp.Status)
		if resp.Verdict == "FAIL" {
			fails++
		}
		assert.GreaterOrEqual(t, resp.DurationS, 0.5)
		assert.LessOrEqual(t, resp.DurationS, 3.6)
		durations[resp.DurationS] = true
	}
	assert.Greater(t, fails, 8, "about half of 40 flake")
	assert.Less(t, fails, 32, "about half of 40 flake")
	assert.Greater(t, len(durations), 5, "durations vary between sessions")

	// flake=0 answers as the deterministic mode does; flake=1 always flakes.
	plain := simRun(t, "builtin:sim", req)
	never := simRun(t, "builtin:sim?flake=0&seed=7", req)
	assert.Equal(t, plain.Verdict, never.Verdict)
	assert.Equal(t, plain.Summary, never.Summary)
	assert.Equal(t, "FAIL", simRun(t, "builtin:sim?flake=1&seed=7", req).Verdict)
}

func TestSimStochasticFlakeFailsAMutatingRole(t *testing.T) {
	t.Parallel()
	req := newRequest(t, 21, "implementer", "build-implementer", intp(3), "Implement task 3.\n", true)
	resp := simRun(t, "builtin:sim?flake=1&seed=3", req)
	assert.Equal(t, manifest.StatusFailed, resp.Status)
	assert.Contains(t, resp.Reason, "simulated flake (builtin:sim?flake=1&seed=3)")
}

// A replica of a replicated run draws by its identity, not by its session name:
// a rerun that gives it another session (an interrupted run's worktrees keep
// theirs) draws the same; another replica draws otherwise.
func TestSimStochasticDrawsByReplicaWhenGiven(t *testing.T) {
	t.Parallel()
	s := &SimStochastic{Flake: 0.5, Seed: 7}
	req := newRequest(t, 30, "gate", "build-gate", nil, "Check the build.\n", false)
	req.Replica, req.Session = "mutated 2", "1775430161-4"
	f1, d1 := s.draw(req)
	req.Session = "1775430161-7"
	f2, d2 := s.draw(req)
	assert.Equal(t, [2]float64{f1, d1}, [2]float64{f2, d2}, "same replica, another session name")
	req.Replica = "mutated 3"
	f3, d3 := s.draw(req)
	assert.NotEqual(t, [2]float64{f1, d1}, [2]float64{f3, d3}, "another replica")
	req.Replica = ""
	f4, _ := s.draw(req)
	req.Session = "1775430161-4"
	f5, _ := s.draw(req)
	assert.NotEqual(t, f4, f5, "outside a replicated run, the session decides")
}
