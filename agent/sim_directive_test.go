package agent

import (
	"context"
	"math"
	"strconv"
	"testing"

	"github.com/go-git/go-git/v5"

	"github.com/replaytool/replay/manifest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseSimDirective(t *testing.T) {
	t.Parallel()
	e, ok, err := parseSimDirective([]byte("# Reviewer\n<!-- replay-sim: flake=0.7 duration=0.5 -->\nbody"))
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, simEffects{flake: 0.7, hasFlake: true, scale: 0.5}, e)
	_, ok, err = parseSimDirective([]byte("no directive"))
	assert.False(t, ok)
	assert.NoError(t, err)
	for _, bad := range []string{"replay-sim: flake=2", "replay-sim: duration=0", "replay-sim: speed=3", "replay-sim: flake=x"} {
		_, _, err := parseSimDirective([]byte(bad))
		assert.Error(t, err, bad)
	}
}

// The directive has real effects: flake=1 fails a mutating role even under
// plain builtin:sim, flake=0 overrides the spec's rate, and duration scales the
// simulated duration.
func TestSimDirectiveSetsFailureRateAndDuration(t *testing.T) {
	t.Parallel()
	body := "Implement task 3.\n<!-- replay-sim: flake=1 -->\n"
	resp := simRun(t, "builtin:sim", newRequest(t, 21, "implementer", "build-implementer", intp(3), body, true))
	assert.Equal(t, manifest.StatusFailed, resp.Status)
	assert.Contains(t, resp.Reason, "simulated flake (replay-sim: flake=1)")

	body = "Implement task 3.\n<!-- replay-sim: flake=0 -->\n"
	resp = simRun(t, "builtin:sim?flake=1&seed=3", newRequest(t, 22, "implementer", "build-implementer", intp(3), body, true))
	assert.Equal(t, manifest.StatusCompleted, resp.Status, resp.Reason)

	plain := simRun(t, "builtin:sim?flake=0&seed=3", newRequest(t, 23, "gate", "build-gate", nil, "Check.\nreplay-sim: duration=1\n", false))
	half := simRun(t, "builtin:sim?flake=0&seed=3", newRequest(t, 24, "gate", "build-gate", nil, "Check.\nreplay-sim: duration=1\n", false))
	assert.Equal(t, plain.DurationS, half.DurationS, "same body, same draw")
	scaled := simRun(t, "builtin:sim?flake=0&seed=3", newRequest(t, 25, "gate", "build-gate", nil, "Check.\nreplay-sim: duration=10\n", false))
	assert.Greater(t, scaled.DurationS, plain.DurationS*3, "ten times the scale: far longer (the body differs, so the draw does too)")

	bad := simRun(t, "builtin:sim", newRequest(t, 26, "gate", "build-gate", nil, "replay-sim: flake=7\n", false))
	assert.Equal(t, manifest.StatusError, bad.Status)
	assert.Contains(t, bad.Reason, "flake=\"7\"")
}

func FuzzParseSimDirective(f *testing.F) {
	for _, seed := range []string{"replay-sim: flake=0.7 duration=0.5", "<!-- replay-sim: -->", "replay-sim: flake=", "x\nreplay-sim: duration=1e308\n"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		e, ok, err := parseSimDirective(body)
		if err == nil && ok {
			if e.flake < 0 || e.flake > 1 || !(e.scale > 0) {
				t.Fatalf("accepted out-of-range effects %+v from %q", e, body)
			}
		}
	})
}

// TestSimResponseIgnoresSeqPathAndSession: builtin:sim's response and commit
// depend on the dispatch (role, phase, task, template, body, replica), never on
// its seq (concurrent replicas take seqs in whatever order they reach the shared
// manifest), the directories it runs in or the session's name (a replica's
// branch). Two replicas that differ only there give the same bytes.
func TestSimResponseIgnoresSeqPathAndSession(t *testing.T) {
	t.Parallel()
	sim, err := New("builtin:sim?flake=0&seed=3", Options{})
	require.NoError(t, err)
	for _, tc := range []struct{ role, template string }{
		{"build-reviewer", "build-reviewer"},
		{"build-implementer", "build-implementer"},
	} {
		var outs []string
		var shas []string
		for i, seq := range []int{7, 1234} {
			req := newRequest(t, seq, tc.role, tc.template, intp(1), "Review it.\n", true)
			req.Session = []string{"1775440961", "1775440961-12"}[i]
			req.Replica = "mutated 3"
			resp, err := sim.Run(context.Background(), req)
			require.NoError(t, err)
			require.Equal(t, manifest.StatusCompleted, resp.Status, resp.Reason)
			outs = append(outs, string(resp.Output))
			if tc.role == "build-implementer" {
				repo, err := git.PlainOpen(req.WorkDir)
				require.NoError(t, err)
				head, err := repo.Head()
				require.NoError(t, err)
				shas = append(shas, head.Hash().String())
			}
		}
		assert.Equal(t, outs[0], outs[1], "%s: the response is the same at any seq, path and session", tc.role)
		if shas != nil {
			assert.Equal(t, shas[0], shas[1], "the simulated commit is the same at any seq and session")
		}
	}
}

// Every directive line counts: a template's line and one in the recorded
// context combine; difficulty and giveup are read, and bad values are errors.
func TestSimDirectiveDifficultyAndGiveUp(t *testing.T) {
	t.Parallel()
	e, ok, err := parseSimDirective([]byte("<!-- replay-sim: flake=0.1 -->\n## Context\nreplay-sim: difficulty=0.5 giveup=0.25\n"))
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, simEffects{flake: 0.1, hasFlake: true, scale: 1, difficulty: 0.5, giveup: 0.25}, e)
	for _, bad := range []string{"replay-sim: difficulty=-1", "replay-sim: giveup=1.5", "replay-sim: difficulty=x"} {
		_, _, err := parseSimDirective([]byte(bad))
		assert.Error(t, err, bad)
	}
	// giveup=1 fails every dispatch; giveup=0 none (flake 0).
	fail := simRun(t, "builtin:sim?flake=0&seed=3", newRequest(t, 31, "implementer", "build-implementer", intp(1), "Do it.\nreplay-sim: giveup=1\n", true))
	assert.Equal(t, manifest.StatusFailed, fail.Status)
	ok0 := simRun(t, "builtin:sim?flake=0&seed=3", newRequest(t, 32, "implementer", "build-implementer", intp(1), "Do it.\nreplay-sim: giveup=0\n", true))
	assert.Equal(t, manifest.StatusCompleted, ok0.Status, ok0.Reason)
}

// Difficulty raises the failure rate to 1 - (1 - flake)^(1 + D) and the
// duration by 1 + D: over many replicas, a pipeline of difficulty 3 at flake 0.2
// fails about 1 - 0.8^4 = 59% of its dispatches.
func TestSimDifficultyRaisesFailureRate(t *testing.T) {
	t.Parallel()
	st := &SimStochastic{Flake: 0.2, Seed: 9}
	fails, easy, hard := 0, 0.0, 0.0
	const n = 4000
	for i := range n {
		req := Request{Role: "build-gate", Template: "build-gate", Replica: "mutated " + strconv.Itoa(i), Body: []byte("x")}
		f, d := st.apply(req, simEffects{scale: 1, difficulty: 3})
		_, d0 := st.apply(req, simEffects{scale: 1})
		if f {
			fails++
		}
		hard, easy = hard+d, easy+d0
	}
	rate := float64(fails) / n
	assert.InDelta(t, 1-math.Pow(0.8, 4), rate, 0.03)
	assert.InDelta(t, 4, hard/easy, 0.05, "durations times 1 + D")
}
