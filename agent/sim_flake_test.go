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
