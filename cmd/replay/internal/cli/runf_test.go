package cli

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// parseWith builds a command with a runF that captures its options, runs it
// on args under a root that declares the global flags (as NewCmdRoot does),
// and returns what the flags and arguments parsed into: the command itself
// never runs. It also runs the command with global flags before args and checks
// they land in the options' Global as parsed, and that the options hold no
// Factory (only the dependencies they use).
func parseWith[O any](t *testing.T, build func(*Factory, func(*O) error) *cobra.Command, args ...string) *O {
	t.Helper()
	got := parseOnce(t, build, args...)
	assertNoFactory(t, got)
	for _, g := range globalCases {
		opts := parseOnce(t, build, append(append([]string{}, g.args...), args...)...)
		global := reflect.ValueOf(opts).Elem().FieldByName("Global")
		require.True(t, global.IsValid(), "%T has no Global field", opts)
		assert.Equal(t, g.want, global.Interface(), "global flags %q of %T", g.args, opts)
	}
	return got
}

// globalCases are global flags a command may be given and what they parse into.
var globalCases = []struct {
	args []string
	want globalOptions
}{
	{nil, globalOptions{}},
	{[]string{"--now", "2026-04-07T18:00:00Z", "--verbose", "--format", "text"}, globalOptions{Now: "2026-04-07T18:00:00Z", Verbose: true, Format: "text"}},
	{[]string{"--quiet", "--format=markdown"}, globalOptions{Quiet: true, Format: "markdown"}},
}

// parseOnce runs the command built by build on args under a root with the
// global flags, and returns the options its runF was given.
func parseOnce[O any](t *testing.T, build func(*Factory, func(*O) error) *cobra.Command, args ...string) *O {
	t.Helper()
	var got *O
	cmd := build(&Factory{}, func(o *O) error { got = o; return nil })
	root := &cobra.Command{Use: "root"}
	addGlobalFlags(root.PersistentFlags(), &globalOptions{})
	root.AddCommand(cmd)
	root.SetArgs(append([]string{cmd.Name()}, args...))
	root.SilenceErrors, root.SilenceUsage = true, true
	require.NoError(t, root.Execute(), "args %q", args)
	require.NotNil(t, got, "runF was not called for %q", args)
	return got
}

// assertNoFactory fails when opts (a pointer to a struct) holds a *Factory, at
// any depth of its embedded structs.
func assertNoFactory(t *testing.T, opts any) {
	t.Helper()
	factory := reflect.TypeFor[*Factory]()
	var walk func(reflect.Type, string)
	walk = func(typ reflect.Type, path string) {
		for i := range typ.NumField() {
			fl := typ.Field(i)
			assert.NotEqual(t, factory, fl.Type, "%s.%s holds the Factory: give the options the dependencies they use", path, fl.Name)
			if fl.Type.Kind() == reflect.Struct {
				walk(fl.Type, path+"."+fl.Name)
			}
		}
	}
	walk(reflect.TypeOf(opts).Elem(), reflect.TypeOf(opts).Elem().Name())
}

// parseFails is parseWith for arguments the command must refuse before runF.
func parseFails[O any](t *testing.T, build func(*Factory, func(*O) error) *cobra.Command, want string, args ...string) {
	t.Helper()
	called := false
	cmd := build(&Factory{}, func(*O) error { called = true; return nil })
	cmd.SetArgs(args)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	assert.ErrorContains(t, cmd.Execute(), want, "args %q", args)
	assert.False(t, called, "runF ran for %q", args)
}

// TestRunFParsesEveryCommand: every command with a runF parses its flags and
// arguments into its options struct, and the defaults a user relies on hold.
// (resume, plan, status, mcp and the manifest seq commands have their own
// tests in profile_test.go, newcomer_test.go, mcp_internal_test.go and
// manifest_test.go; they are covered here too for defaults.)
func TestRunFParsesEveryCommand(t *testing.T) {
	t.Parallel()
	t.Run("checkpoint", func(t *testing.T) {
		c := parseWith(t, NewCmdCheckpointCreate, "--reason", "pre-wave-2", "--repo", "/p", "--shadow", "/s")
		assert.Equal(t, "pre-wave-2", c.Reason)
		assert.Equal(t, "manual", c.Source)
		assert.Equal(t, "/p", c.Repo)
		assert.Equal(t, "/s", c.Shadow)
		l := parseWith(t, NewCmdCheckpointList, "--repo", "/p")
		assert.Equal(t, "/p", l.Repo)
		s := parseWith(t, NewCmdCheckpointShow, "pre-wave-1")
		assert.Equal(t, "pre-wave-1", s.Ref)
		r := parseWith(t, NewCmdCheckpointRestore, "abc123", "-y", "--scratch", "/m")
		assert.Equal(t, "abc123", r.Ref)
		assert.True(t, r.Yes)
		assert.Equal(t, "/m", r.Scratch)
		parseFails(t, NewCmdCheckpointRestore, "accepts 1 arg", "a", "b")
		parseFails(t, NewCmdCheckpointList, "unknown command", "extra")
	})
	t.Run("resume", func(t *testing.T) {
		r := parseWith(t, NewCmdResume, "run/dir", "--yes", "--agent", "builtin:sim", "--jobs", "3", "--from-seq", "7")
		assert.Equal(t, "run/dir", r.Path)
		assert.True(t, r.Yes)
		assert.Equal(t, "builtin:sim", r.Agent)
		assert.Equal(t, 3, r.Jobs)
		assert.Equal(t, 7, r.FromSeq)
		assert.Equal(t, 30*time.Minute, r.AgentTimeout)
		assert.Equal(t, "exact", r.Reuse)
		assert.False(t, r.DryRun)
		d := parseWith(t, NewCmdResume, "--dry-run")
		assert.True(t, d.DryRun)
		assert.Equal(t, 1, d.Jobs)
	})
	t.Run("plan and status", func(t *testing.T) {
		p := parseWith(t, NewCmdPlan, "d", "--explain", "--from-phase", "wave-2", "--mutate", "a.md=b.md")
		assert.Equal(t, "d", p.Path)
		assert.True(t, p.Explain)
		assert.Equal(t, "wave-2", p.FromPhase)
		assert.Equal(t, []string{"a.md=b.md"}, p.Mutations)
		s := parseWith(t, NewCmdStatus, "some/dir", "--scratch", "/m")
		assert.Equal(t, "some/dir", s.Dir)
		assert.Equal(t, "/m", s.Scratch)
	})
	t.Run("corpus", func(t *testing.T) {
		c := parseWith(t, NewCmdCorpus, "runs/*", "other", "--mutate", "a.md=b.md", "--out", "/o", "--replicas", "4", "--jobs", "2")
		assert.Equal(t, []string{"runs/*", "other"}, c.Args)
		assert.Equal(t, []string{"a.md=b.md"}, c.Mutations)
		assert.Equal(t, "/o", c.Out)
		assert.Equal(t, 4, c.Replicas)
		assert.Equal(t, 2, c.Jobs)
		r := parseWith(t, NewCmdCorpusReport, "--from", "s3://b/x", "--shards", "3", "--out", "/o")
		assert.Equal(t, "s3://b/x", r.From)
		assert.Equal(t, 3, r.Shards)
		assert.Equal(t, "/o", r.Out)
	})
	t.Run("demo", func(t *testing.T) {
		d := parseWith(t, NewCmdDemo, "--dir", "/d", "--keep")
		assert.Equal(t, "/d", d.Dir)
		assert.True(t, d.Keep)
		c := parseWith(t, NewCmdDemo, "--crashed", "/c")
		assert.Equal(t, "/c", c.Crashed)
		parseFails(t, NewCmdDemo, "unknown command", "extra")
	})
	t.Run("diff fork lineage state", func(t *testing.T) {
		d := parseWith(t, NewCmdDiff, "a", "b", "--overlay", "3=x.md")
		assert.Equal(t, "a", d.Path)
		assert.Equal(t, "b", d.Other)
		assert.Equal(t, []string{"3=x.md"}, d.Overlays)
		ds := parseWith(t, NewCmdDiff, "a", "--session", "s1")
		assert.Equal(t, "s1", ds.Session)
		parseFails(t, NewCmdDiff, "give it alone", "a", "b", "--session", "s1")
		f := parseWith(t, NewCmdFork, "run", "--at", "5", "--substitute", "5=y.md", "--reason", "why")
		assert.Equal(t, "run", f.Path)
		assert.Equal(t, 5, f.At)
		assert.Equal(t, []string{"5=y.md"}, f.Substitutions)
		assert.Equal(t, "why", f.Reason)
		assert.Equal(t, 1, f.Jobs)
		parseFails(t, NewCmdFork, "--at", "run")
		l := parseWith(t, NewCmdLineage, "run", "--repo", "/p")
		assert.Equal(t, "run", l.Path)
		assert.Equal(t, "/p", l.Repo)
		s := parseWith(t, NewCmdState, "run", "--at", "9")
		assert.Equal(t, "run", s.Path)
		assert.Equal(t, 9, s.At)
		parseFails(t, NewCmdState, "--at", "run")
	})
	t.Run("gate and report", func(t *testing.T) {
		g := parseWith(t, NewCmdGate, "run", "--allow-undecided")
		assert.Equal(t, "run", g.Path)
		assert.True(t, g.AllowUndecided)
		assert.Equal(t, []string{"reject"}, g.FailOn)
		r := parseWith(t, NewCmdReport, "run", "--html", "/r.html")
		assert.Equal(t, "run", r.Path)
		assert.Equal(t, "/r.html", r.HTML)
	})
	t.Run("manifest", func(t *testing.T) {
		s := parseWith(t, NewCmdManifestSeq, "--dir", "/d")
		assert.Equal(t, "/d", s.Dir)
		c := parseWith(t, NewCmdManifestCleanup, "--dir", "/d", "--scratch", "/m", "--failed")
		assert.Equal(t, "/d", c.Dir)
		assert.Equal(t, "/m", c.Scratch)
		assert.True(t, c.Failed)
		r := parseWith(t, NewCmdManifestRepair, "--dir", "/d")
		assert.Equal(t, "/d", r.Dir)
		b := parseWith(t, NewCmdManifestBefore, "--dir", "/d", "--seq", "4", "--file", "x.md", "--role", "r", "--model-tier", "opus")
		assert.Equal(t, 4, b.Seq)
		assert.Equal(t, "opus", *b.ModelTier)
		a := parseWith(t, NewCmdManifestAfter, "--dir", "/d", "--seq", "4", "--status", "completed")
		assert.Equal(t, "completed", a.Status)
	})
	t.Run("push pull", func(t *testing.T) {
		p := parseWith(t, NewCmdPush, "run", "--to", "s3://b", "--force")
		assert.Equal(t, "run", p.Path)
		assert.Equal(t, "s3://b", p.To)
		assert.True(t, p.Force)
		l := parseWith(t, NewCmdPull, "s3://b", "r1", "--into", "/i", "--repo", "/p")
		assert.Equal(t, "s3://b", l.From)
		assert.Equal(t, "r1", l.Run)
		assert.Equal(t, "/i", l.Into)
		assert.Equal(t, "/p", l.Repo)
		parseFails(t, NewCmdPull, "accepts between 1 and 2 arg", "a", "b", "c")
	})
	t.Run("skill verify mcp", func(t *testing.T) {
		s := parseWith(t, NewCmdSkillInstall, "--dir", "/s", "--force")
		assert.Equal(t, "/s", s.Dir)
		assert.True(t, s.Force)
		v := parseWith(t, NewCmdVerify, "run", "--strict")
		assert.Equal(t, "run", v.Path)
		assert.True(t, v.Strict)
		m := parseWith(t, NewCmdMCP, "--allow-write", "--root", "/r")
		assert.True(t, m.AllowWrite)
		assert.Equal(t, []string{"/r"}, m.Roots)
	})
}

// TestEveryRunFIsParsed: every command constructor of this build that takes a
// runF is exercised through it by some test of the package (parseWith,
// parseFails, or a captured runF), so a flag that stops parsing is caught.
func TestEveryRunFIsParsed(t *testing.T) {
	t.Parallel()
	pkg, err := build.ImportDir(".", 0)
	require.NoError(t, err)
	var tests strings.Builder
	for _, name := range append(pkg.TestGoFiles, pkg.XTestGoFiles...) {
		data, err := os.ReadFile(filepath.Clean(name))
		require.NoError(t, err)
		tests.Write(data)
	}
	fset := token.NewFileSet()
	var missing []string
	n := 0
	for _, name := range pkg.GoFiles {
		file, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "NewCmd") || len(fn.Type.Params.List) < 2 {
				continue
			}
			n++
			used := regexp.MustCompile(`(parseWith|parseFails)\(t, ` + fn.Name.Name + `\b|` + fn.Name.Name + `\([^,]+, func\(\w+ \*`)
			if !used.MatchString(tests.String()) {
				missing = append(missing, fn.Name.Name)
			}
		}
	}
	assert.Greater(t, n, 20, "the constructors with a runF were not found")
	assert.Empty(t, missing, "commands whose runF no test parses flags through")
}
