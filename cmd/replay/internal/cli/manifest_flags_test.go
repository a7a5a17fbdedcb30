package cli

import (
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
)

func TestSplitUnknownFlags(t *testing.T) {
	t.Parallel()
	f, _, _ := manifestFactory(t)
	root := NewCmdRoot(f)
	after, _, err := root.Find([]string{"manifest", "after"})
	if err != nil {
		t.Fatal(err)
	}
	known, ignored := splitUnknownFlags(after, []string{"--dir", "d", "--new", "v", "--summary", "--x", "--flag=1", "--bare", "--seq", "1", "--", "--kept"})
	assert.Equal(t, []string{"--dir", "d", "--summary", "--x", "--seq", "1", "--", "--kept"}, known)
	assert.Equal(t, []string{"new", "flag", "bare"}, ignored)
	known, _ = splitUnknownFlags(after, []string{"--d", "x"})
	assert.Equal(t, []string{"--d", "x"}, known, "an ambiguous prefix stays, for the usage error")
	assert.Equal(t, "explain", closestFlag(mustFind(t, root, "plan"), "explian"))
	assert.Equal(t, "", closestFlag(mustFind(t, root, "plan"), "zz"))
}

func mustFind(t *testing.T, root *cobra.Command, name string) *cobra.Command {
	t.Helper()
	c, _, err := root.Find([]string{name})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// FuzzSplitUnknownFlags: any argument list splits without a panic, and what is
// kept is a subsequence of the arguments.
func FuzzSplitUnknownFlags(f *testing.F) {
	f.Add("--dir d --new v --summary --x --flag=1 --bare -- --kept")
	f.Add("--d x --seq")
	fac := &Factory{Getenv: func(string) string { return "" }}
	root := NewCmdRoot(fac)
	after, _, _ := root.Find([]string{"manifest", "after"})
	f.Fuzz(func(t *testing.T, line string) {
		args := strings.Fields(line)
		known, ignored := splitUnknownFlags(after, args)
		assert.LessOrEqual(t, len(known)+len(ignored), len(args)+len(ignored))
		i := 0
		for _, k := range known {
			j := slices.Index(args[i:], k)
			if !assert.GreaterOrEqual(t, j, 0, "kept %q in order", k) {
				return
			}
			i += j + 1
		}
	})
}
