package agent

import (
	"testing"

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
