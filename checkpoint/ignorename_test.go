package checkpoint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"github.com/stretchr/testify/require"
)

// match reports whether the path (components from the project root) is ignored,
// by go-git's Match of the full path against every rule, the last match winning:
// the reference dirMatcher's answers are checked against.
func (r *ignoreRules) match(path []string, isDir bool) bool {
	for i := len(r.patterns) - 1; i >= 0; i-- {
		if m := r.patterns[i].Match(path, isDir); m != gitignore.NoMatch {
			return m == gitignore.Exclude
		}
	}
	return false
}

// TestDirMatcherAgreesWithMatch: matching the names of a directory with the rules
// made ready for it (forDir) says exactly what go-git's Match of the full paths
// says, for patterns of every kind, negations, directory-only patterns and
// patterns from .gitignore files at several depths.
func TestDirMatcherAgreesWithMatch(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(tmp, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		return p
	}
	rootLines := "*.log\nnode_modules/\n!keep.log\nbuild\n/out\ndoc/*.md\n**/gen\na?c\n[ab]x\n*.tmp \nsp\\ \n\\#x\n!*.log/\nfoo//\nlit\\*\n"
	subLines := "*.go\n!main.go\ncache/\n!x.log\nz*\n/abs\n"
	root, err := (&ignoreRules{}).with(write("root", rootLines), nil)
	require.NoError(t, err)
	sub, err := root.with(write("sub", subLines), []string{"src"})
	require.NoError(t, err)
	deep, err := sub.with(write("deep", "!*.go\n*.md\n"), []string{"src", "pkg", "deep"})
	require.NoError(t, err)
	names := []string{"a.log", "keep.log", "x.log", "node_modules", "build", "out", "gen", "abc", "axc", "ax", "bx",
		"cx", "f.tmp", "f.tmp ", "sp ", "sp", "#x", "foo", "lit*", "litx", "main.go", "m.go", "cache", "zeta", "abs",
		"README.md", "doc", "x.log.d", "plain", "xlog", "ftmp"}
	dirs := [][]string{nil, {"src"}, {"src", "pkg"}, {"src", "pkg", "deep"}, {"src", "pkg", "deep", "more"},
		{"doc"}, {"build.log"}, {"src", "cache"}, {"other", "zeta"}, {"node_modules", "x"}}
	for _, rules := range []*ignoreRules{root, sub, deep} {
		for _, dir := range dirs {
			m := rules.forDir(dir)
			for _, name := range names {
				for _, isDir := range []bool{false, true} {
					path := append(append([]string(nil), dir...), name)
					want := rules.match(path, isDir)
					require.Equal(t, want, m.match(name, isDir), "%s dir=%v", strings.Join(path, "/"), isDir)
				}
			}
		}
	}
}
