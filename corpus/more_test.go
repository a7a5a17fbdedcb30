package corpus

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/replicate"
)

// TestMoreExtendsTheCorpusExperiment: --more N adds N replicas per arm to every
// pipeline of the experiment the log holds, from the replicas each recorded,
// and decides over all of them; one cut short by a kill is finished by the same
// command again, never extended twice; other settings are refused.
func TestMoreExtendsTheCorpusExperiment(t *testing.T) {
	t.Parallel()
	root := corpusDirs(t, "a", "b", "c")
	results := map[string]*replicate.Result{"a": fakeResult(3, 3, 3, 100, 90), "b": fakeResult(2, 3, 3, 100, 90), "c": fakeResult(3, 2, 3, 100, 90)}
	var calls []string
	req := request(root, &calls, results)
	_, err := Run(req)
	require.NoError(t, err)

	var extends []string
	var lines []string
	kill := ""
	req.More = 2
	req.Info = func(l string) { lines = append(lines, l) }
	req.Extend = func(_ context.Context, dir string, have, add int) (*replicate.Result, string, error) {
		name := filepath.Base(dir)
		if name == kill {
			return nil, "", context.Canceled
		}
		extends = append(extends, name+":"+strconv.Itoa(have)+"+"+strconv.Itoa(add))
		return fakeResult(have+add, have+add-1, have+add, 100, 90), dir + "/report.md", nil
	}
	res, err := Run(req)
	require.NoError(t, err)
	assert.Equal(t, []string{"a:3+2", "b:3+2", "c:3+2"}, extends, "each pipeline continued from its own 3 replicas per arm")
	assert.Equal(t, 5, res.ReplicasPerArm)
	assert.Equal(t, 3, res.Continued)
	for _, row := range res.Rows {
		assert.Equal(t, 5, row.Replicas)
		require.NotNil(t, row.Baseline)
		assert.Len(t, row.Baseline.Passed, 5, "the row holds every replica, the earlier ones too")
	}
	assert.Equal(t, 15, res.Aggregate.BaselinePass.N, "the corpus decides over all the replicas")
	assert.Contains(t, strings.Join(lines, ""), "adding 2 more per arm (to 5)")

	// Killed at the second pipeline of the next extension: the same command
	// again finishes it (b and c to 7), it does not add 2 more on top.
	extends, kill = nil, "b"
	_, err = Run(req)
	require.ErrorIs(t, err, context.Canceled)
	assert.Contains(t, err.Error(), "run the same command again")
	assert.Equal(t, []string{"a:5+2"}, extends)
	extends, kill, lines = nil, "", nil
	res, err = Run(req)
	require.NoError(t, err)
	assert.Equal(t, []string{"b:5+2", "c:5+2"}, extends)
	assert.Equal(t, 7, res.ReplicasPerArm)
	assert.Contains(t, strings.Join(lines, ""), "finishing that first")
	log, err := os.ReadFile(filepath.Join(root, "out", LogFile))
	require.NoError(t, err)
	assert.Equal(t, 2, strings.Count(string(log), `"kind":"more"`), "one extension line per extension")

	// The run without --more reports the experiment as it now stands.
	plain := request(root, &calls, results)
	res, err = Run(plain)
	require.NoError(t, err)
	assert.Equal(t, 7, res.ReplicasPerArm)
	assert.Equal(t, 21, res.Aggregate.BaselinePass.N)

	// Another agent is another experiment: refused, nothing extended.
	other := req
	other.Settings.Agent = "builtin:sim?flake=0.2&seed=1"
	extends = nil
	_, err = Run(other)
	require.ErrorIs(t, err, ErrMismatch)
	assert.Empty(t, extends)

	// No experiment in --out: a usage error saying how to start one.
	none := req
	none.Out = "elsewhere"
	_, err = Run(none)
	require.ErrorIs(t, err, ErrBadOptions)
	assert.Contains(t, err.Error(), "start one with --replicas N")
	_, statErr := os.Stat(filepath.Join(root, "elsewhere"))
	assert.True(t, errors.Is(statErr, os.ErrNotExist), "nothing written")
}
