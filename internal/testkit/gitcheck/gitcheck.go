package gitcheck

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/replaytool/replay/internal/testkit/testtools"
)

// Checker runs the comparisons with one git binary.
type Checker struct {
	// Git is the path of the git binary.
	Git string
	// Home is the HOME the git binary runs with (an empty directory, so no
	// user's configuration changes what it prints).
	Home string
}

// Repo runs every repository check on dir (a working tree, a bare repository or
// a .git directory) and reports each mismatch as a test error. Without a git
// binary it checks nothing and says so in the log, unless REPLAY_REQUIRE_GIT is
// set, which makes it a failure; a test that means nothing without git calls
// testtools.Git first.
func Repo(t testing.TB, dir string) {
	t.Helper()
	if c, ok := checker(t); ok {
		if err := c.Repo(dir); err != nil {
			t.Errorf("gitcheck %s:\n%v", dir, err)
		}
	}
}

// Fsck runs only git fsck --strict on dir, for a repository too large to
// compare object by object in a default test run (Repo runs it too).
func Fsck(t testing.TB, dir string) {
	t.Helper()
	if c, ok := checker(t); ok {
		if err := c.Fsck(dir); err != nil {
			t.Errorf("gitcheck %s:\n%v", dir, err)
		}
	}
}

// Index compares git ls-files --stage on the index file indexPath of the
// repository at dir with go-git's decoder, and reports a mismatch as a test
// error. Without git it does what Repo does.
func Index(t testing.TB, dir, indexPath string) {
	t.Helper()
	if c, ok := checker(t); ok {
		if err := c.Index(dir, indexPath); err != nil {
			t.Errorf("gitcheck %s:\n%v", indexPath, err)
		}
	}
}

func checker(t testing.TB) (Checker, bool) {
	t.Helper()
	bin, ok := testtools.GitIfPresent(t)
	if !ok {
		t.Logf("gitcheck: no git binary, the comparison with git is left out (set %s=1 to require it)", testtools.RequireGitEnv)
		return Checker{}, false
	}
	return Checker{Git: bin, Home: t.TempDir()}, true
}

// Repo runs every repository check on dir and returns the mismatches, each with
// a readable diff, joined in one error; nil when git and go-git agree.
func (c Checker) Repo(dir string) error {
	errs := []error{c.Fsck(dir)}
	g, err := openGoGit(dir)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	gitRefs, err := c.refs(dir)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	errs = append(errs, diff("refs", gitRefs, g.refs()))
	// Every commit reachable from a ref, with its tree: git rev-list --all.
	gitCommits, err := c.lines(dir, nil, "rev-list", "--all", "--format=%H %T", "--no-commit-header")
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	commits, err := g.commits()
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	errs = append(errs, diff("commits reachable from the refs, with their trees (git rev-list --all)", gitCommits, commits))
	gitObjects, err := c.lines(dir, nil, "cat-file", "--batch-check", "--batch-all-objects")
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	objects, err := g.objects()
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	errs = append(errs, diff("objects (id type size)", gitObjects, objects))
	// Every tree object's entries, each tree once: together the recursive
	// listing of every commit's tree, without listing shared subtrees again.
	var trees []string
	for _, l := range gitObjects {
		if f := strings.Fields(l); len(f) == 3 && f[1] == "tree" {
			trees = append(trees, f[0])
		}
	}
	gitTrees, err := c.trees(dir, trees)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	for _, tree := range trees {
		entries, err := g.tree(tree)
		if err != nil {
			return errors.Join(append(errs, err)...)
		}
		errs = append(errs, diff("entries of tree "+tree+" (git diff-tree from the empty tree)", gitTrees[tree], entries))
	}
	return errors.Join(errs...)
}

// Fsck runs git fsck --strict on dir: an error carries what fsck printed.
func (c Checker) Fsck(dir string) error {
	if out, err := c.cmd(dir, nil, "fsck", "--strict", "--no-dangling", "--no-progress").CombinedOutput(); err != nil {
		return fmt.Errorf("git fsck --strict: %v\n%s", err, out)
	}
	return nil
}

// Index compares git ls-files --stage on indexPath with go-git's decoder.
func (c Checker) Index(dir, indexPath string) error {
	abs, err := filepath.Abs(indexPath)
	if err != nil {
		return err
	}
	out, err := c.cmd(dir, []string{"GIT_INDEX_FILE=" + abs}, "ls-files", "--stage", "-t", "-z").Output()
	if err != nil {
		return fmt.Errorf("git ls-files --stage: %v%s", err, stderr(err))
	}
	var gitEntries []string
	for _, e := range strings.Split(string(out), "\x00") {
		if e != "" {
			gitEntries = append(gitEntries, e)
		}
	}
	want, err := goGitIndex(abs)
	if err != nil {
		return err
	}
	return diff("index entries (tag mode id stage, name)", gitEntries, want)
}

// gitDirArgs are the arguments that point git at dir: -C for a working tree,
// --git-dir for a bare repository or a .git directory.
func gitDirArgs(dir string) []string {
	if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
		return []string{"-C", dir}
	}
	return []string{"--git-dir=" + dir, "--work-tree=" + dir}
}

func (c Checker) cmd(dir string, env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(c.Git, append(gitDirArgs(dir), args...)...)
	// Only the variables git reads for a repository's location are dropped
	// from the test's environment; the rest (PATH) is kept.
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES",
			"GIT_COMMON_DIR", "GIT_NAMESPACE", "GIT_CEILING_DIRECTORIES":
			continue
		}
		cmd.Env = append(cmd.Env, kv)
	}
	cmd.Env = append(cmd.Env, "HOME="+c.Home, "XDG_CONFIG_HOME="+c.Home, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL="+os.DevNull, "LC_ALL=C")
	cmd.Env = append(cmd.Env, env...)
	return cmd
}

// lines runs git and returns its output's non-empty lines.
func (c Checker) lines(dir string, stdin []byte, args ...string) ([]string, error) {
	cmd := c.cmd(dir, nil, args...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %v%s", strings.Join(args, " "), err, stderr(err))
	}
	var lines []string
	for _, l := range strings.Split(string(out), "\n") {
		if l != "" {
			lines = append(lines, l)
		}
	}
	return lines, nil
}

func stderr(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) && len(ee.Stderr) > 0 {
		return "\n" + strings.TrimSpace(string(ee.Stderr))
	}
	return ""
}

// refs is every ref as "name id", and HEAD as "HEAD -> target" when symbolic
// and "HEAD id" when it resolves.
func (c Checker) refs(dir string) ([]string, error) {
	refs, err := c.lines(dir, nil, "for-each-ref", "--format=%(refname) %(objectname)")
	if err != nil {
		return nil, err
	}
	if out, err := c.cmd(dir, nil, "symbolic-ref", "-q", "HEAD").Output(); err == nil {
		refs = append(refs, "HEAD -> "+strings.TrimSpace(string(out)))
	}
	if out, err := c.cmd(dir, nil, "rev-parse", "-q", "--verify", "HEAD^{}").Output(); err == nil {
		refs = append(refs, "HEAD "+strings.TrimSpace(string(out)))
	}
	return refs, nil
}

// trees lists the entries of each tree (one git diff-tree against the empty
// tree for them all) as "mode type id\tname".
func (c Checker) trees(dir string, trees []string) (map[string][]string, error) {
	const empty = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
	var in bytes.Buffer
	for _, tree := range trees {
		fmt.Fprintf(&in, "%s %s\n", empty, tree)
	}
	cmd := c.cmd(dir, nil, "diff-tree", "--stdin", "-z", "--no-renames")
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git diff-tree --stdin: %v%s", err, stderr(err))
	}
	return parseDiffTree(out)
}

// parseDiffTree reads git diff-tree --stdin -z output for pairs of the empty
// tree and a tree: a line "<empty> <tree>" and then, for every entry of the
// tree, ":000000 <mode> <zero id> <id> A\0<name>\0".
func parseDiffTree(out []byte) (map[string][]string, error) {
	files := map[string][]string{}
	var tree string
	for len(out) > 0 {
		if out[0] != ':' {
			line, rest, _ := bytes.Cut(out, []byte("\n"))
			fields := strings.Fields(string(line))
			if len(fields) != 2 {
				return nil, fmt.Errorf("git diff-tree: unexpected line %q", line)
			}
			tree, out = fields[1], rest
			if files[tree] == nil {
				files[tree] = []string{}
			}
			continue
		}
		meta, rest, ok := bytes.Cut(out, []byte{0})
		path, rest2, ok2 := bytes.Cut(rest, []byte{0})
		fields := strings.Fields(string(meta))
		if !ok || !ok2 || len(fields) != 5 || tree == "" {
			return nil, fmt.Errorf("git diff-tree: unexpected record %q", meta)
		}
		typ := "blob"
		switch fields[1] {
		case "160000":
			typ = "commit"
		case "040000":
			typ = "tree"
		}
		files[tree] = append(files[tree], fmt.Sprintf("%s %s %s\t%s", fields[1], typ, fields[3], path))
		out = rest2
	}
	return files, nil
}

// diff is nil when a and b hold the same lines in any order, and otherwise an
// error naming what was compared, with the lines only git printed ("-git") and
// those only go-git gave ("+go-git"), at most 20 of each.
func diff(what string, git, gogit []string) error {
	onlyGit, onlyGoGit := minus(git, gogit), minus(gogit, git)
	if len(onlyGit) == 0 && len(onlyGoGit) == 0 {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s differ (%d from git, %d from go-git):\n", what, len(git), len(gogit))
	for _, side := range []struct {
		mark  string
		lines []string
	}{{"-git    ", onlyGit}, {"+go-git ", onlyGoGit}} {
		for i, l := range side.lines {
			if i == 20 {
				fmt.Fprintf(&b, "%s... and %d more\n", side.mark, len(side.lines)-i)
				break
			}
			fmt.Fprintf(&b, "%s%q\n", side.mark, l)
		}
	}
	return errors.New(strings.TrimRight(b.String(), "\n"))
}

// minus is a without the lines of b (counting repeats), sorted.
func minus(a, b []string) []string {
	count := map[string]int{}
	for _, l := range b {
		count[l]++
	}
	var out []string
	for _, l := range a {
		if count[l] > 0 {
			count[l]--
			continue
		}
		out = append(out, l)
	}
	slices.Sort(out)
	return out
}
