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
)

// setParent rewrites the parent_session of the lineage record in fork dir dir.
func setParent(t *testing.T, dir, parent string) {
	t.Helper()
	path := filepath.Join(dir, fork.LineageFile)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var rec map[string]any
	require.NoError(t, json.Unmarshal(data, &rec))
	rec["parent_session"] = parent
	data, err = json.Marshal(rec)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o644))
}

// TestLineageShowsCyclesAndDanglingParents edits received forks' lineage records so
// their parents form a cycle (two forks naming each other, one naming itself) or
// name a run that is not there: replay lineage still shows every fork, under the
// original run with a note, warns of each on stderr, and exits 0; --json holds
// the same nodes.
func TestLineageShowsCyclesAndDanglingParents(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	a := runFork(t, s, p, p.Scratch, "--at", "15", "--reason", "a")
	b := runFork(t, s, p, a.Dir, "--at", "17", "--reason", "b")
	c := runFork(t, s, p, p.Scratch, "--at", "16", "--reason", "c")
	d := runFork(t, s, p, p.Scratch, "--at", "14", "--reason", "d")
	setParent(t, a.Dir, b.Session) // a -> b -> a
	setParent(t, c.Dir, c.Session) // c -> c
	setParent(t, d.Dir, "1700000000")

	r := runGuarded(t, s, p.Project, "lineage", p.Scratch)
	require.Equal(t, 0, r.Code, r.Stderr)
	assertNoPanic(t, r)
	for _, f := range []forkJSON{a, b, c, d} {
		assert.Contains(t, r.Stdout, f.Session+" fork at seq", "every fork is shown\n%s", r.Stdout)
	}
	assert.Contains(t, r.Stderr, "cycle", r.Stderr)
	assert.Contains(t, r.Stderr, a.Session+" -> "+b.Session+" -> "+a.Session, r.Stderr)
	assert.Contains(t, r.Stderr, c.Session+" -> "+c.Session, r.Stderr)
	assert.Contains(t, r.Stderr, "its parent 1700000000 is gone", r.Stderr)
	assert.Contains(t, r.Stderr, filepath.Join(d.Dir, fork.LineageFile), "the warning names the record")
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	assert.Len(t, lines, 5, r.Stdout)

	r = runGuarded(t, s, p.Project, "lineage", p.Scratch, "--json")
	require.Equal(t, 0, r.Code, r.Stderr)
	var tree fork.Node
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &tree))
	seen := map[string]bool{}
	var walk func(n *fork.Node)
	walk = func(n *fork.Node) {
		require.False(t, seen[n.Session], "a node appears once")
		seen[n.Session] = true
		for _, ch := range n.Children {
			walk(ch)
		}
	}
	walk(&tree)
	assert.Len(t, seen, 5)
}
