package cli_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/replaytool/replay/cmd/replay/internal/cli"
	"github.com/replaytool/replay/corpus"
	"github.com/replaytool/replay/internal/iostreams"
)

const examplesDir = "../../../../docs/examples"

// shellCommands splits a POSIX shell script of simple commands (words, single
// and double quotes, backslash-newline, newlines, && and a leading exec) into
// the argument lists of its commands, expanding $NAME, ${NAME} and
// $((NAME + n)) from env; an unset name is an error, as with set -u.
func shellCommands(script string, env map[string]string) ([][]string, error) {
	var cmds [][]string
	var words []string
	var w strings.Builder
	inWord, quote := false, byte(0)
	end := func() {
		if inWord {
			words = append(words, w.String())
		}
		w.Reset()
		inWord = false
	}
	endCmd := func() {
		end()
		if len(words) > 0 && words[0] == "exec" {
			words = words[1:]
		}
		if len(words) > 0 {
			cmds = append(cmds, words)
		}
		words = nil
	}
	for i := 0; i < len(script); i++ {
		c := script[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
			} else {
				w.WriteByte(c)
			}
		case c == '$':
			v, n, err := expand(script[i:], env)
			if err != nil {
				return nil, err
			}
			w.WriteString(v)
			inWord, i = true, i+n-1
		case quote == '"':
			if c == '"' {
				quote = 0
			} else {
				w.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, inWord = c, true
		case c == '\\' && i+1 < len(script) && script[i+1] == '\n':
			i++
		case c == '\\' && i+1 < len(script):
			w.WriteByte(script[i+1])
			inWord, i = true, i+1
		case c == '\n' || c == ';':
			endCmd()
		case c == '&' && strings.HasPrefix(script[i:], "&&"):
			endCmd()
			i++
		case c == ' ' || c == '\t':
			end()
		case strings.ContainsRune("|<>`(){}*?[&", rune(c)) && !(c == '*' && quote == 0 && inWord):
			return nil, fmt.Errorf("shell syntax %q at %d is beyond this reader: keep the example's commands simple", c, i)
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, errors.New("unterminated quote")
	}
	endCmd()
	return cmds, nil
}

var (
	arith = regexp.MustCompile(`^\$\(\(\s*([A-Za-z_][A-Za-z0-9_]*)\s*\+\s*([0-9]+)\s*\)\)`)
	brace = regexp.MustCompile(`^\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)
	plain = regexp.MustCompile(`^\$([A-Za-z_][A-Za-z0-9_]*)`)
)

// expand reads the expansion at the start of s: its value and length.
func expand(s string, env map[string]string) (string, int, error) {
	lookup := func(name string) (string, error) {
		v, ok := env[name]
		if !ok {
			return "", fmt.Errorf("$%s is not set", name)
		}
		return v, nil
	}
	if m := arith.FindStringSubmatch(s); m != nil {
		v, err := lookup(m[1])
		if err != nil {
			return "", 0, err
		}
		a, err := strconv.Atoi(v)
		if err != nil {
			return "", 0, fmt.Errorf("$%s=%q in arithmetic", m[1], v)
		}
		b, _ := strconv.Atoi(m[2])
		return strconv.Itoa(a + b), len(m[0]), nil
	}
	for _, re := range []*regexp.Regexp{brace, plain} {
		if m := re.FindStringSubmatch(s); m != nil {
			v, err := lookup(m[1])
			return v, len(m[0]), err
		}
	}
	return "", 0, fmt.Errorf("expansion %.10q is beyond this reader", s)
}

func TestShellCommandsReader(t *testing.T) {
	t.Parallel()
	env := map[string]string{"I": "2", "S": "s3://b/p", "N": "4"}
	cmds, err := shellCommands("exec replay corpus '/c/runs/*' --agent 'claude -p' \\\n --shard \"$((I + 1))/$N\" --to \"${S}\" --out /x/shard-$I && replay gate\n", env)
	require.NoError(t, err)
	assert.Equal(t, [][]string{{"replay", "corpus", "/c/runs/*", "--agent", "claude -p", "--shard", "3/4", "--to", "s3://b/p", "--out", "/x/shard-2"}, {"replay", "gate"}}, cmds)
	for _, bad := range []string{"echo $UNSET", "a | b", "echo 'open", "echo $(date)"} {
		_, err := shellCommands(bad, env)
		assert.Error(t, err, bad)
	}
}

// checkReplay parses args (after "replay") with the real root command, and runs
// the validation of `replay corpus` and `replay corpus report` (without running
// them). It returns the corpus options of a corpus command, else nil.
func checkReplay(t *testing.T, args []string) *cli.CorpusOptions {
	t.Helper()
	ios, _, _, _ := iostreams.Test()
	f := &cli.Factory{IOStreams: ios, Getenv: func(string) string { return "" }, Getwd: func() (string, error) { return t.TempDir(), nil }}
	root := cli.NewCmdRoot(f)
	c, rest, err := root.Find(args)
	require.NoError(t, err, "%v", args)
	require.NoError(t, c.ParseFlags(rest), "%v", args)
	require.NoError(t, c.ValidateArgs(c.Flags().Args()), "%v", args)
	require.NoError(t, c.ValidateRequiredFlags(), "%v", args)
	var got *cli.CorpusOptions
	switch c.CommandPath() {
	case "replay corpus":
		cmd := cli.NewCmdCorpus(f, func(o *cli.CorpusOptions) error { got = o; return nil })
		cmd.SetArgs(args[1:])
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		require.NoError(t, cmd.Execute(), "%v", args)
		require.NotNil(t, got)
	case "replay corpus report":
		ran := false
		cmd := cli.NewCmdCorpusReport(f, func(*cli.CorpusReportOptions) error { ran = true; return nil })
		cmd.SetArgs(args[2:])
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		require.NoError(t, cmd.Execute(), "%v", args)
		require.True(t, ran)
	}
	return got
}

// replayCommands are the replay invocations of a script, each checked, and
// the options of its corpus shard run (nil when none).
func replayCommands(t *testing.T, script string, env map[string]string) ([]string, *cli.CorpusOptions) {
	t.Helper()
	cmds, err := shellCommands(script, env)
	require.NoError(t, err, script)
	var paths []string
	var shard *cli.CorpusOptions
	for _, c := range cmds {
		require.Equal(t, "replay", c[0], "the example's commands are replay's: %v", c)
		if o := checkReplay(t, c[1:]); o != nil && o.Shard != "" {
			require.Nil(t, shard, "one shard run per script")
			shard = o
		}
		paths = append(paths, strings.Join(c[:min(3, len(c))], " "))
	}
	return paths, shard
}

// shardsCover checks that the shard specs are 1/N..N/N, each once.
func shardsCover(t *testing.T, specs []string, n int) {
	t.Helper()
	var ks []int
	for _, s := range specs {
		sh, err := corpus.ParseShard(s)
		require.NoError(t, err)
		require.Equal(t, n, sh.N, "every shard has the same N")
		ks = append(ks, sh.K)
	}
	slices.Sort(ks)
	want := make([]int, n)
	for i := range want {
		want[i] = i + 1
	}
	assert.Equal(t, want, ks, "the shards cover 1..N exactly once")
}

type k8sJob struct {
	Kind string `yaml:"kind"`
	Spec struct {
		CompletionMode string `yaml:"completionMode"`
		Completions    int    `yaml:"completions"`
		Parallelism    int    `yaml:"parallelism"`
		Template       struct {
			Spec struct {
				Containers []struct {
					Env []struct {
						Name  string `yaml:"name"`
						Value string `yaml:"value"`
					} `yaml:"env"`
					Command []string `yaml:"command"`
					Args    []string `yaml:"args"`
				} `yaml:"containers"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

func TestExampleKubernetesIndexedJob(t *testing.T) {
	t.Parallel()
	f, err := os.Open(filepath.Join(examplesDir, "corpus-k8s-indexed-job.yaml"))
	require.NoError(t, err)
	defer f.Close()
	dec := yaml.NewDecoder(f)
	var jobs []k8sJob
	for {
		var j k8sJob
		if err := dec.Decode(&j); err != nil {
			require.ErrorContains(t, err, "EOF")
			break
		}
		jobs = append(jobs, j)
	}
	require.Len(t, jobs, 2)
	shards, merge := jobs[0], jobs[1]
	require.Equal(t, "Job", shards.Kind)
	require.Equal(t, "Indexed", shards.Spec.CompletionMode)
	n := shards.Spec.Completions
	require.GreaterOrEqual(t, n, 2)
	var specs []string
	for idx := range n {
		c := shards.Spec.Template.Spec.Containers[0]
		env := map[string]string{"JOB_COMPLETION_INDEX": strconv.Itoa(idx)}
		for _, e := range c.Env {
			env[e.Name] = e.Value
		}
		require.Equal(t, []string{"/bin/sh", "-c"}, c.Command)
		require.Len(t, c.Args, 1)
		paths, opts := replayCommands(t, c.Args[0], env)
		require.Equal(t, []string{"replay corpus /corpus/runs/*"}, paths)
		require.NotNil(t, opts)
		assert.Equal(t, env["REPLAY_STORE"], opts.To)
		assert.Contains(t, opts.Out, fmt.Sprint("shard-", idx), "each shard keeps its own log directory")
		specs = append(specs, opts.Shard)
	}
	shardsCover(t, specs, n)

	mc := merge.Spec.Template.Spec.Containers[0]
	env := map[string]string{}
	for _, e := range mc.Env {
		env[e.Name] = e.Value
	}
	paths, _ := replayCommands(t, mc.Args[0], env)
	assert.Equal(t, []string{"replay corpus report", "replay gate --result"}, paths)
}

type ghWorkflow struct {
	Env  map[string]string `yaml:"env"`
	Jobs map[string]struct {
		Needs    any `yaml:"needs"`
		Strategy struct {
			Matrix struct {
				Shard []int `yaml:"shard"`
			} `yaml:"matrix"`
		} `yaml:"strategy"`
		Steps []struct {
			Env map[string]string `yaml:"env"`
			Run string            `yaml:"run"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

var ghExpr = regexp.MustCompile(`\$\{\{\s*([^}]*?)\s*\}\}`)

// ghEval replaces the workflow expressions of s: the matrix entry and job
// total given, anything else (secrets, contexts) by a placeholder.
func ghEval(s string, vars map[string]string) string {
	return ghExpr.ReplaceAllStringFunc(s, func(m string) string {
		name := ghExpr.FindStringSubmatch(m)[1]
		if v, ok := vars[name]; ok {
			return v
		}
		return "placeholder-" + strings.NewReplacer(".", "-", " ", "").Replace(name)
	})
}

func TestExampleGitHubActionsMatrix(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join(examplesDir, "corpus-github-actions-matrix.yml"))
	require.NoError(t, err)
	var wf ghWorkflow
	require.NoError(t, yaml.Unmarshal(data, &wf))
	shardJob, merge := wf.Jobs["shard"], wf.Jobs["merge"]
	matrix := shardJob.Strategy.Matrix.Shard
	require.GreaterOrEqual(t, len(matrix), 2)
	assert.Equal(t, "shard", merge.Needs, "the merge job waits for every shard")
	runner := map[string]string{"GITHUB_WORKSPACE": "/home/runner/work/r/r", "RUNNER_TEMP": "/home/runner/work/_temp"}
	var specs []string
	for _, k := range matrix {
		vars := map[string]string{"matrix.shard": strconv.Itoa(k), "strategy.job-total": strconv.Itoa(len(matrix))}
		var runs []*cli.CorpusOptions
		for _, st := range shardJob.Steps {
			if !strings.Contains(st.Run, "replay ") {
				continue
			}
			env := map[string]string{}
			for _, m := range []map[string]string{runner, wf.Env, st.Env} {
				for k, v := range m {
					env[k] = ghEval(v, vars)
				}
			}
			_, opts := replayCommands(t, ghEval(st.Run, vars), env)
			runs = append(runs, opts)
		}
		require.Len(t, runs, 1)
		require.NotNil(t, runs[0])
		assert.Equal(t, wf.Env["REPLAY_STORE"], runs[0].To)
		specs = append(specs, runs[0].Shard)
	}
	shardsCover(t, specs, len(matrix))

	var paths []string
	for _, st := range merge.Steps {
		if strings.Contains(st.Run, "replay ") {
			p, _ := replayCommands(t, ghEval(st.Run, nil), wf.Env)
			paths = append(paths, p...)
		}
	}
	assert.Equal(t, []string{"replay corpus report", "replay gate --result"}, paths)
}
