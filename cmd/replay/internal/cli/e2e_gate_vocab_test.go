package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGateKnowsOnlyItsVerdicts gates replicated and corpus results whose verdict
// is not exactly one of adopt, reject, skip, expand (a case variant, a word of
// another tool), whose counts were edited, or which were cut short: each is exit 2
// naming the value or the file, never "Gate passed". The exact words still pass or
// fail as --fail-on says.
func TestGateKnowsOnlyItsVerdicts(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	r := s.Run(t, p.Project, replicasArgs(t, p, "--replicas", "1", "--json")...)
	require.Equal(t, 0, r.Code, r.Stderr)
	var replicated map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &replicated))
	corpusDoc := map[string]any{
		"format": "replay-corpus/1", "generated_at": "2026-04-07T00:00:00Z",
		"settings": map[string]any{"metric": "duration_s", "mutations": []string{"a.md -> b.md"}},
		"aggregate": map[string]any{"pipelines": 2, "verdict": "reject", "step": 1, "reason": "worse",
			"baseline_pass": map[string]any{"passed": 2, "n": 2, "rate": 1.0},
			"mutated_pass":  map[string]any{"passed": 0, "n": 2, "rate": 0.0}},
		"pipelines": []any{},
	}
	write := func(name string, doc map[string]any, edit func(map[string]any)) string {
		t.Helper()
		data, err := json.Marshal(doc)
		require.NoError(t, err)
		var c map[string]any
		require.NoError(t, json.Unmarshal(data, &c))
		edit(c)
		data, err = json.Marshal(c)
		require.NoError(t, err)
		path := filepath.Join(p.Root, name)
		require.NoError(t, os.WriteFile(path, data, 0o644))
		return path
	}
	decision := func(c map[string]any) map[string]any { return c["decision"].(map[string]any) }
	aggregate := func(c map[string]any) map[string]any { return c["aggregate"].(map[string]any) }
	setVerdict := func(get func(map[string]any) map[string]any, v string) func(map[string]any) {
		return func(c map[string]any) { get(c)["verdict"] = v }
	}
	for _, kind := range []struct {
		name string
		doc  map[string]any
		get  func(map[string]any) map[string]any
	}{{"replicated", replicated, decision}, {"corpus", corpusDoc, aggregate}} {
		for _, v := range []string{"Reject", "REJECT", "rejected", "reject ", "pass", "ADOPT"} {
			path := write(kind.name+"-"+strings.TrimSpace(v)+".json", kind.doc, setVerdict(kind.get, v))
			g := runGuarded(t, s, p.Project, "gate", "--result", path)
			assert.Equal(t, 2, g.Code, "%s verdict %q: %s%s", kind.name, v, g.Stdout, g.Stderr)
			assert.NotContains(t, g.Stdout, "Gate passed", "%s verdict %q", kind.name, v)
			assert.Contains(t, g.Stderr, `verdict "`+v+`"`, kind.name)
			assert.Contains(t, g.Stderr, "adopt, reject, undecided, skip, expand", kind.name)
		}
		tampered := write(kind.name+"-tampered.json", kind.doc, func(c map[string]any) {
			kind.get(c)["mutated_pass"] = map[string]any{"passed": 5, "n": 2, "rate": 2.5}
		})
		g := runGuarded(t, s, p.Project, "gate", "--result", tampered)
		assert.Equal(t, 2, g.Code, "%s tampered: %s", kind.name, g.Stderr)
		assert.Contains(t, g.Stderr, "mutated_pass", kind.name)

		exact := write(kind.name+"-exact.json", kind.doc, setVerdict(kind.get, "reject"))
		data, err := os.ReadFile(exact)
		require.NoError(t, err)
		truncated := filepath.Join(p.Root, kind.name+"-truncated.json")
		require.NoError(t, os.WriteFile(truncated, data[:len(data)/2], 0o644))
		g = runGuarded(t, s, p.Project, "gate", "--result", truncated)
		assert.Equal(t, 2, g.Code, "%s truncated: %s", kind.name, g.Stderr)
		assert.Contains(t, g.Stderr, truncated, kind.name)

		g = runGuarded(t, s, p.Project, "gate", "--result", exact)
		assert.Equal(t, 1, g.Code, "%s: the exact word still fails the gate: %s", kind.name, g.Stderr)
		g = runGuarded(t, s, p.Project, "gate", "--result", exact, "--fail-on", "undecided")
		assert.Equal(t, 0, g.Code, "%s: and passes one that does not fail on it: %s", kind.name, g.Stderr)
	}
}
