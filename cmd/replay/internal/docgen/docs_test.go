package main

import (
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDocsIndexLinksEveryPage: docs/README.md (the docs index) links every page of
// docs/ and of docs/examples/, and the README links the index.
func TestDocsIndexLinksEveryPage(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(docsDir, "README.md"))
	require.NoError(t, err)
	linked := map[string]bool{}
	for _, target := range links(string(data)) {
		p, _, _ := strings.Cut(target, "#")
		linked[path.Clean(p)] = true
	}
	for _, dir := range []string{"", "examples"} {
		entries, err := os.ReadDir(filepath.Join(docsDir, dir))
		require.NoError(t, err)
		for _, e := range entries {
			name := path.Join(dir, e.Name())
			if e.IsDir() || !strings.HasSuffix(name, ".md") || name == "README.md" {
				continue
			}
			assert.True(t, linked[name], "docs/README.md does not link docs/%s: add a line for it", name)
		}
	}
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	require.NoError(t, err)
	assert.Contains(t, links(string(readme)), "docs/README.md", "the README links the docs index")
}

// layoutEntry is one line of the Layout section of docs/development.md: "- `pkg`: ...".
var layoutEntry = regexp.MustCompile("(?m)^- `([^`]+)`:")

// TestLayoutListsEveryPackage: the Layout section of docs/development.md has one
// line for every package of the module and for nothing else, and lists them so
// that no package imports one listed above it.
func TestLayoutListsEveryPackage(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(docsDir, "development.md"))
	require.NoError(t, err)
	section := markdownSection(string(data), "## Layout")
	require.NotEmpty(t, section, "docs/development.md has a Layout section")
	var listed []string
	pos := map[string]int{}
	for _, m := range layoutEntry.FindAllStringSubmatch(section, -1) {
		_, dup := pos[m[1]]
		assert.False(t, dup, "the Layout lists %s twice", m[1])
		pos[m[1]] = len(listed)
		listed = append(listed, m[1])
	}
	imports := modulePackages(t)
	for pkg := range imports {
		_, ok := pos[pkg]
		assert.True(t, ok, "package %s is missing from the Layout section of docs/development.md: add one line for it", pkg)
	}
	for _, pkg := range listed {
		_, ok := imports[pkg]
		assert.True(t, ok, "the Layout section of docs/development.md lists %s, which is no package", pkg)
	}
	for pkg, deps := range imports {
		for _, dep := range deps {
			p, okp := pos[pkg]
			d, okd := pos[dep]
			if okp && okd {
				assert.Greater(t, d, p, "%s imports %s, which the Layout lists above it", pkg, dep)
			}
		}
	}
}

// modulePackages lists the module's packages (paths relative to the module root)
// with the module packages each imports (tests not counted), from `go list`.
func modulePackages(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...")
	cmd.Dir = repoRoot
	out, err := cmd.Output()
	require.NoError(t, err, "go list")
	mod := "github.com/replaytool/replay/"
	pkgs := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		var deps []string
		for _, imp := range f[1:] {
			if strings.HasPrefix(imp, mod) {
				deps = append(deps, strings.TrimPrefix(imp, mod))
			}
		}
		pkgs[strings.TrimPrefix(f[0], mod)] = deps
	}
	return pkgs
}

// markdownSection returns the text under the heading line title, up to the next
// heading of the same or a higher level outside a code block.
func markdownSection(text, title string) string {
	level := strings.Index(title, " ")
	_, after, ok := strings.Cut(text, "\n"+title+"\n")
	if !ok {
		return ""
	}
	var b strings.Builder
	fenced := false
	for _, line := range strings.Split(after, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
		}
		if !fenced {
			if n := len(line) - len(strings.TrimLeft(line, "#")); n > 0 && n <= level && strings.HasPrefix(line[n:], " ") {
				break
			}
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}

// TestCommandListsMatchTheCommandTree: the command lists of docs/cli.md and of the
// README name every visible command of the tree the binary builds, and name no
// command it does not have.
func TestCommandListsMatchTheCommandTree(t *testing.T) {
	tree := map[string]bool{}
	var walk func(c *cobra.Command, prefix string)
	walk = func(c *cobra.Command, prefix string) {
		for _, sub := range c.Commands() {
			if !sub.IsAvailableCommand() || sub.Name() == "help" {
				continue
			}
			p := strings.TrimSpace(prefix + " " + sub.Name())
			tree[p] = true
			walk(sub, p)
		}
	}
	walk(newRoot(), "")
	require.Contains(t, tree, "manifest seq")
	for _, file := range []string{filepath.Join(docsDir, "cli.md"), filepath.Join(repoRoot, "README.md")} {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		rel, _ := filepath.Rel(repoRoot, file)
		section := markdownSection(string(data), "## Commands")
		block := regexp.MustCompile("(?s)```\n(.*?)```").FindStringSubmatch(section)
		require.NotNil(t, block, "%s: a code block under ## Commands lists the commands", rel)
		named := commandsNamed(block[1])
		for p := range named {
			assert.True(t, p == "" || tree[p], "%s names `replay %s`, which is no command", rel, p)
		}
		var missing []string
		for p := range tree {
			if !named[p] {
				missing = append(missing, p)
			}
		}
		sort.Strings(missing)
		assert.Empty(t, missing, "%s: the command list under ## Commands lacks these commands", rel)
	}
}

// commandWord is a command name or alternatives of names, as the lists write
// them: "seq|before|after".
var commandWord = regexp.MustCompile(`^[a-z][a-z-]*(\|[a-z][a-z-]*)*$`)

// commandsNamed reads a command list, one "replay a b|c ARGS  text" a line (the
// text after two spaces says what the command does): the leading lower-case words
// of the usage are the command path, an alternative names each
// command; a group is named with each of its commands.
func commandsNamed(list string) map[string]bool {
	named := map[string]bool{}
	for _, line := range strings.Split(list, "\n") {
		usage, _, _ := strings.Cut(strings.TrimSpace(line), "  ") // the text after two spaces says what it does
		f := strings.Fields(usage)
		if len(f) == 0 || f[0] != "replay" {
			continue
		}
		paths := []string{""}
		for _, w := range f[1:] {
			if !commandWord.MatchString(w) {
				break
			}
			var next []string
			for _, p := range paths {
				for _, alt := range strings.Split(w, "|") {
					next = append(next, strings.TrimSpace(p+" "+alt))
				}
			}
			paths = next
		}
		for _, p := range paths {
			for q := p; ; {
				named[q] = true
				i := strings.LastIndex(q, " ")
				if i < 0 {
					break
				}
				q = q[:i]
			}
		}
	}
	return named
}

func TestCommandsNamed(t *testing.T) {
	got := commandsNamed("replay [PATH] [flags]   resume\nreplay manifest seq|before ...  x\nreplay corpus DIR|GLOB...\nreplay completion|version\nnot a command line\n")
	assert.Equal(t, map[string]bool{"": true, "manifest": true, "manifest seq": true, "manifest before": true,
		"corpus": true, "completion": true, "version": true}, got)
}
