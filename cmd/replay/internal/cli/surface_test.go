package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/prompt"
)

// commandKey is the path of cmd below the root, as commandCodes lists it.
func commandKey(cmd *cobra.Command) string {
	return strings.TrimPrefix(strings.TrimPrefix(cmd.CommandPath(), "replay"), " ")
}

func walk(cmd *cobra.Command, fn func(*cobra.Command)) {
	fn(cmd)
	for _, c := range cmd.Commands() {
		walk(c, fn)
	}
}

func TestEveryCommandHasExamplesAndItsExitStatus(t *testing.T) {
	t.Parallel()
	root := NewCmdRoot(&Factory{})
	seen := map[string]bool{}
	codeLine := regexp.MustCompile(`(?m)^  ([0-9]+)  `)
	walk(root, func(c *cobra.Command) {
		key := commandKey(c)
		seen[key] = true
		codes, ok := commandCodes[key]
		require.True(t, ok, "command %q has no exit codes listed", key)
		assert.NotEmpty(t, c.Example, "command %q has no Example", key)
		assert.Equal(t, 1, strings.Count(c.Long, "EXIT STATUS"), "command %q: one EXIT STATUS section", key)
		section := c.Long[strings.Index(c.Long, "EXIT STATUS"):]
		var got []string
		for _, m := range codeLine.FindAllStringSubmatch(section, -1) {
			got = append(got, m[1])
		}
		var want []string
		for _, code := range codes {
			want = append(want, strconv.Itoa(code))
		}
		assert.Equal(t, want, got, "command %q lists exactly the codes it can return", key)
		assert.NotContains(t, c.Example, "replay.jsonl", "command %q: the comparison file is replay-diff.jsonl", key)
		c.Flags().VisitAll(func(fl *pflag.Flag) {
			name, _ := pflag.UnquoteUsage(fl)
			assert.NotContains(t, name, " ", "command %q flag --%s: value name %q", key, fl.Name, name)
		})
	})
	for key := range commandCodes {
		assert.True(t, seen[key], "commandCodes lists %q, which is no command", key)
	}
	// The guards' code only where guards are.
	assert.NotContains(t, exitStatusFor("plan"), "\n  3  ")
	assert.Contains(t, exitStatusFor("checkpoint restore"), "\n  3  ")
	assert.NotContains(t, exitStatusFor("checkpoint list"), "\n  4  ")
}

func TestFlagValueNames(t *testing.T) {
	t.Parallel()
	root := NewCmdRoot(&Factory{})
	before, _, err := root.Find([]string{"manifest", "before"})
	require.NoError(t, err)
	usage := before.Flags().FlagUsages()
	assert.Regexp(t, `--seq N\s`, usage)
	assert.Regexp(t, `--model-tier LABEL\s`, usage)
	plan, _, err := root.Find([]string{"plan"})
	require.NoError(t, err)
	usage = plan.Flags().FlagUsages()
	assert.Regexp(t, `--mutate ORIG=REPL\s`, usage)
	assert.Regexp(t, `--profile FILE\s`, usage)
	assert.Regexp(t, `--jobs N\s`, usage)
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	sb := newCPSandbox(t)
	require.NoError(t, os.Mkdir(filepath.Join(sb.project, "stat"), 0o755))
	tests := []struct {
		args    []string
		code    int
		want    string
		mustNot string
		stdout  string
	}{
		{[]string{"checkpoint", "lst"}, 2, `unknown command "lst" for "replay checkpoint"; did you mean list?`, "", ""},
		{[]string{"manifest", "bogus"}, 2, `unknown command "bogus" for "replay manifest"`, "", ""},
		{[]string{"checkpoint", "restor", "x", "--yes"}, 2, "did you mean restore?", "unknown flag", ""},
		{[]string{"stats"}, 2, `unknown command "stats" for "replay"; did you mean state or status?`, "Manifest not found", ""},
		{[]string{"-q", "-v", "status"}, 2, "--quiet and --verbose cannot be used together", "", ""},
		{[]string{"checkpoint", "restore", "x", "--yes=no"}, 2, "--yes=no: a switch takes no value, or true or false", "strconv", ""},
		{[]string{"demo", "--json"}, 2, "no JSON form", "", ""},
		{[]string{"plan", "--profile", "buidl"}, 2, "built-in profiles: build, debugging, siege", "Manifest not found", ""},
		{[]string{"status", "--profile", "gone/profile.json"}, 2, "no such file; give a profile JSON file or a built-in profile name", "", ""},
		{[]string{"plan", "a", "b"}, 2, "accepts at most 1 arg", "", ""},
		// The other side: an existing path is a PATH even when it looks like a command.
		{[]string{"stat"}, 4, "Manifest not found. Cannot resume.", "unknown command", ""},
		// A word far from every command is a PATH too.
		{[]string{"zzzzzz"}, 4, "no such file or directory", "unknown command", ""},
		// "Cannot resume." belongs to the commands that resume.
		{[]string{"diff", "nowhere"}, 4, "Manifest not found.", "Cannot resume", ""},
		{[]string{"checkpoint"}, 0, "", "", "Usage:"},
	}
	for _, tt := range tests {
		r := sb.run(t, false, &prompt.Scripted{}, tt.args...)
		assert.Equal(t, tt.code, r.code, "%v: %s", tt.args, r.stderr)
		assert.Contains(t, r.stderr, tt.want, "%v", tt.args)
		if tt.mustNot != "" {
			assert.NotContains(t, r.stderr, tt.mustNot, "%v", tt.args)
		}
		assert.Contains(t, r.stdout, tt.stdout, "%v", tt.args)
	}
}

func TestVerboseAddsDetail(t *testing.T) {
	t.Parallel()
	sb := newCPSandbox(t)
	r := sb.run(t, false, &prompt.Scripted{}, "checkpoint", "list", "--verbose")
	assert.Contains(t, r.stderr, "verbose: project "+sb.project+"; shadow repository ")
	r = sb.run(t, false, &prompt.Scripted{}, "checkpoint", "list")
	assert.NotContains(t, r.stderr, "verbose:")
	r = sb.run(t, false, &prompt.Scripted{}, "status", "-v")
	assert.Contains(t, r.stderr, "verbose: project "+sb.project+"; looking for .pipeline-active")
}

func TestVersionFromBuildInfo(t *testing.T) {
	t.Parallel()
	bi := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "github.com/replaytool/replay", Version: "v0.3.0"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123abcd"}, {Key: "vcs.time", Value: "2026-04-07T18:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	v := versionFrom(VersionInfo{Version: "1.2.3"}, bi)
	assert.Equal(t, VersionInfo{Version: "1.2.3", ModuleVersion: "v0.3.0", GoVersion: "go1.26.0", Revision: "0123abcd", Time: "2026-04-07T18:00:00Z", Modified: true}, v)
	assert.Equal(t, "replay 1.2.3 (module v0.3.0, go1.26.0)\nrevision 0123abcd (2026-04-07T18:00:00Z), with uncommitted changes", v.String())
	assert.Equal(t, "replay 1.2.3", VersionInfo{Version: "1.2.3"}.String())

	sb := newCPSandbox(t)
	r := sb.run(t, false, &prompt.Scripted{}, "version", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, `"version": "`+Version+`"`)
}

func TestCompleteCheckpoints(t *testing.T) {
	t.Parallel()
	sb := newCPSandbox(t)
	for _, reason := range []string{"pre-wave-1", "pre-wave-2"} {
		sb.write(t, reason+".go", "package main\n")
		r := sb.run(t, false, &prompt.Scripted{}, "checkpoint", "create", "--reason", reason, "--now", "2026-04-07T18:00:00Z")
		require.Equal(t, 0, r.code, r.stderr)
	}
	r := sb.run(t, false, &prompt.Scripted{}, cobra.ShellCompRequestCmd, "checkpoint", "restore", "")
	require.Equal(t, 0, r.code, r.stderr)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	require.Len(t, lines, 3, r.stdout)
	assert.Regexp(t, `^[0-9a-f]{8}\tpre-wave-2$`, lines[0], "newest first, reason as description")
	assert.Regexp(t, `^[0-9a-f]{8}\tpre-wave-1$`, lines[1])
	assert.Equal(t, ":36", lines[2])

	r = sb.run(t, false, &prompt.Scripted{}, cobra.ShellCompRequestCmd, "plan", "")
	assert.Equal(t, ":0", strings.TrimSpace(r.stdout), "PATH completes files and directories")
	r = sb.run(t, false, &prompt.Scripted{}, cobra.ShellCompRequestCmd, "status", "")
	assert.Equal(t, ":16", strings.TrimSpace(r.stdout), "DIR completes directories")
}

func TestBuiltByGoRun(t *testing.T) {
	t.Parallel()
	assert.True(t, builtByGoRun("/tmp/go-build123456/b001/exe/replay"))
	assert.False(t, builtByGoRun("/home/u/go/bin/replay"))
	assert.False(t, builtByGoRun("/opt/exe/replay"))

	src := filepath.Join(t.TempDir(), "bin")
	require.NoError(t, os.WriteFile(src, []byte("#!/bin/sh\n"), 0o755))
	dst := filepath.Join(t.TempDir(), "demo", "bin", "replay")
	require.NoError(t, copyExecutable(src, dst))
	st, err := os.Stat(dst)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o755), st.Mode().Perm())
	assert.Error(t, copyExecutable(src, dst), "never overwrites")
	assert.True(t, sameFile(dst, dst))
	assert.False(t, sameFile(src, dst))
}
