package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/replaytool/replay/internal/fixture"
	"github.com/replaytool/replay/internal/paths"
	"github.com/replaytool/replay/internal/testkit/s3test"
)

// The engine examples of docs/examples are run here as far as they run
// without a cluster or a GitHub runner: their own shell steps, word for word,
// with sh or bash, against the test S3 server, on a small corpus laid out as
// they expect. Only what needs the network is stood in for: `npm install`
// puts a stand-in `claude` on PATH (printing a version), and the agent the
// shards replay with is the built-in simulator (REPLAY_AGENT).

const examplesDir = "../docs/examples"

// examplesInFull reports whether the examples' shard and merge steps run in
// full (a corpus replayed by every shard, replay built by the workflow's
// step: tens of seconds): under REPLAY_EXAMPLES=1 (CI sets it) or
// REPLAY_STRESS. Without it only the agent checks run (both sides of the
// Job's; the workflow's needs the build).
func examplesInFull() bool {
	return os.Getenv("REPLAY_EXAMPLES") != "" || os.Getenv("REPLAY_STRESS") != ""
}

// exampleCorpus lays out at root what the examples expect: runs/*/project
// (recorded pipelines), home (their runs), mutations/stricter.md and
// skills/build (the templates).
func exampleCorpus(t *testing.T, root string, n int) {
	t.Helper()
	var templates string
	for i := range n {
		p, err := fixture.Build(filepath.Join(root, "runs", string(rune('a'+i))), fixture.Options{})
		require.NoError(t, err)
		dst := paths.ProjectRoot(filepath.Join(root, "home"), p.Project)
		require.NoError(t, os.MkdirAll(filepath.Dir(dst), 0o755))
		require.NoError(t, os.Rename(paths.ProjectRoot(p.Home, p.Project), dst))
		templates = p.Templates
	}
	require.NoError(t, os.CopyFS(filepath.Join(root, "skills", "build"), os.DirFS(templates)))
	orig, err := os.ReadFile(filepath.Join(templates, "build-reviewer-prompt.md"))
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(root, "mutations"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "mutations", "stricter.md"), append(orig, "\n- Every function must have a test.\n"...), 0o644))
}

// toolDir is a folder for PATH holding replay (the built binary) and, when
// agent is true, a stand-in claude.
func toolDir(t *testing.T, agent bool) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.Symlink(binPath, filepath.Join(dir, "replay")))
	if agent {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "claude"), []byte("#!/bin/sh\necho '2.1.332 (Claude Code)'\n"), 0o755))
	}
	return dir
}

// runScript runs script with shell (sh -c, or bash -eo pipefail) and env only.
func runScript(t *testing.T, shell []string, script string, env map[string]string) (string, int) {
	t.Helper()
	cmd := exec.Command(shell[0], append(shell[1:], script)...)
	cmd.Dir = env["PWD"]
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err != nil && cmd.ProcessState == nil {
		t.Fatalf("%v: %v", shell, err)
	}
	return out.String(), cmd.ProcessState.ExitCode()
}

// atRoot maps the example's /corpus volume to root.
func atRoot(s, root string) string {
	return regexp.MustCompile(`/corpus\b(/|$)`).ReplaceAllString(s, root+"$1")
}

type exampleJob struct {
	Spec struct {
		Completions int `yaml:"completions"`
		Template    struct {
			Spec struct {
				Containers []struct {
					Image string `yaml:"image"`
					Env   []struct {
						Name      string `yaml:"name"`
						Value     string `yaml:"value"`
						ValueFrom *struct {
							SecretKeyRef struct {
								Name string `yaml:"name"`
								Key  string `yaml:"key"`
							} `yaml:"secretKeyRef"`
						} `yaml:"valueFrom"`
					} `yaml:"env"`
					EnvFrom []struct {
						SecretRef struct {
							Name string `yaml:"name"`
						} `yaml:"secretRef"`
					} `yaml:"envFrom"`
					Command []string `yaml:"command"`
					Args    []string `yaml:"args"`
				} `yaml:"containers"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

// TestExampleKubernetesJobRuns runs the Indexed Job's shard script for every
// completion index and the merge Job's script against the S3 server, with
// /corpus at a temp dir: the shards store under REPLAY_STORE/RUN_ID and the
// merge reads them back into one report. A pod without the agent CLI, or
// without the API key, fails and stores nothing.
func TestExampleKubernetesJobRuns(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join(examplesDir, "corpus-k8s-indexed-job.yaml"))
	require.NoError(t, err)
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var jobs []exampleJob
	for {
		var j exampleJob
		if dec.Decode(&j) != nil {
			break
		}
		jobs = append(jobs, j)
	}
	require.Len(t, jobs, 2)
	srv := s3test.Start(t)
	srv.MakeBucket(t, "replay-ci")
	root := t.TempDir()
	exampleCorpus(t, root, 2)

	// env is the container's environment as the kubelet gives it, /corpus
	// mapped to root, secrets from the test server (and a test API key).
	env := func(c int, job exampleJob, tools string) map[string]string {
		ct := job.Spec.Template.Spec.Containers[0]
		assert.NotContains(t, ct.Image, "ghcr.io/replaytool", "the image is the one docs/examples/Dockerfile builds")
		e := map[string]string{"PATH": tools + ":/usr/bin:/bin", "PWD": root, "AWS_ENDPOINT_URL_S3": "http://" + srv.Endpoint,
			"AWS_EC2_METADATA_DISABLED": "true", "JOB_COMPLETION_INDEX": strconv.Itoa(c), "TMPDIR": t.TempDir()}
		for _, v := range ct.Env {
			switch {
			case v.ValueFrom != nil:
				assert.Equal(t, "ANTHROPIC_API_KEY", v.ValueFrom.SecretKeyRef.Key, "the agent's API key comes from a named Secret")
				e[v.Name] = "test-api-key"
			default:
				e[v.Name] = atRoot(v.Value, root)
			}
		}
		for _, f := range ct.EnvFrom {
			require.Equal(t, "replay-store-credentials", f.SecretRef.Name)
			for _, kv := range srv.Env() {
				k, v, _ := strings.Cut(kv, "=")
				e[k] = v
			}
		}
		if _, ok := e["REPLAY_AGENT"]; ok {
			e["REPLAY_AGENT"] = "builtin:sim" // the one stand-in: no real agent here
		}
		return e
	}
	script := func(job exampleJob) string {
		ct := job.Spec.Template.Spec.Containers[0]
		require.Equal(t, []string{"/bin/sh", "-c"}, ct.Command)
		require.Len(t, ct.Args, 1)
		return atRoot(ct.Args[0], root)
	}
	shards, merge := jobs[0], jobs[1]
	n := shards.Spec.Completions
	require.GreaterOrEqual(t, n, 2)

	// The other side of the agent check first: no claude, or no key, fails the pod.
	e := env(0, shards, toolDir(t, false))
	out, code := runScript(t, []string{"sh", "-c"}, script(shards), e)
	assert.NotEqual(t, 0, code, "a pod without the agent CLI fails: %s", out)
	e = env(0, shards, toolDir(t, true))
	e["ANTHROPIC_API_KEY"] = ""
	out, code = runScript(t, []string{"sh", "-c"}, script(shards), e)
	assert.NotEqual(t, 0, code, out)
	assert.Contains(t, out, "ANTHROPIC_API_KEY is empty")
	objects, _ := filepath.Glob(filepath.Join(srv.Root, "replay-ci", "*"))
	assert.Empty(t, objects, "a failed agent check stores nothing")

	if !examplesInFull() {
		t.Log("the shard and merge runs need REPLAY_EXAMPLES=1")
		return
	}
	tools := toolDir(t, true)
	for c := range n {
		out, code := runScript(t, []string{"sh", "-c"}, script(shards), env(c, shards, tools))
		require.Equal(t, 0, code, "shard index %d: %s", c, out)
	}
	e = env(0, merge, tools)
	out, code = runScript(t, []string{"sh", "-c"}, script(merge), e)
	assert.Contains(t, []int{0, 1}, code, out) // 1: the gate's verdict on the simulator's runs
	_, err = os.Stat(filepath.Join(root, "corpus-run", e["RUN_ID"], "corpus-result.json"))
	require.NoError(t, err, "the merge wrote the report: %s", out)
	prefixes, _ := filepath.Glob(filepath.Join(srv.Root, "replay-ci", "corpora", "*"))
	assert.Equal(t, []string{filepath.Join(srv.Root, "replay-ci", "corpora", e["RUN_ID"])}, prefixes, "one prefix per run")
}

type exampleWorkflow struct {
	Env  map[string]string `yaml:"env"`
	Jobs map[string]struct {
		Strategy struct {
			Matrix struct {
				Shard []int `yaml:"shard"`
			} `yaml:"matrix"`
		} `yaml:"strategy"`
		Steps []struct {
			Name string            `yaml:"name"`
			Uses string            `yaml:"uses"`
			With map[string]string `yaml:"with"`
			Env  map[string]string `yaml:"env"`
			Run  string            `yaml:"run"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

var ghExpression = regexp.MustCompile(`\$\{\{\s*([^}]*?)\s*\}\}`)

// TestExampleGitHubWorkflowRuns runs the workflow's run steps, job by job and
// shard by shard, with bash as the runner does (GITHUB_PATH honoured): replay
// is built from this repository's source, `npm install` of the agent is
// stood in for, the shards store under the run's own prefix and the merge job
// reads them back. A runner where the agent cannot be installed fails the
// shard before it replays.
func TestExampleGitHubWorkflowRuns(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join(examplesDir, "corpus-github-actions-matrix.yml"))
	require.NoError(t, err)
	var wf exampleWorkflow
	require.NoError(t, yaml.Unmarshal(data, &wf))
	if !examplesInFull() {
		t.Skip("builds replay and replays a corpus in every shard: set REPLAY_EXAMPLES=1")
	}
	srv := s3test.Start(t)
	srv.MakeBucket(t, "replay-ci")
	ws := t.TempDir()
	exampleCorpus(t, filepath.Join(ws, "corpus"), 2)
	require.NoError(t, os.Rename(filepath.Join(ws, "corpus", "mutations"), filepath.Join(ws, "mutations")))
	require.NoError(t, os.Rename(filepath.Join(ws, "corpus", "skills"), filepath.Join(ws, "skills")))
	repoRoot, err := filepath.Abs("..")
	require.NoError(t, err)
	require.NoError(t, os.Symlink(repoRoot, filepath.Join(ws, "replay-src"))) // actions/checkout of replay
	runnerTemp := t.TempDir()
	total := len(wf.Jobs["shard"].Strategy.Matrix.Shard)
	require.GreaterOrEqual(t, total, 2)

	// npm is stood in for: `npm install -g @anthropic-ai/claude-code@V` puts a
	// claude printing V into the global bin dir (on PATH), or fails (offline).
	npmDir := t.TempDir()
	globalBin := t.TempDir()
	npm := fmt.Sprintf("#!/bin/sh\ncase \"$*\" in *@anthropic-ai/claude-code@*) [ -n \"$NPM_OFFLINE\" ] && { echo 'npm ERR! network' >&2; exit 1; }\n"+
		"printf '#!/bin/sh\\necho \"%%s (Claude Code)\"\\n' \"${*##*@}\" > %s/claude; chmod +x %s/claude;; *) exit 1;; esac\n", globalBin, globalBin)
	require.NoError(t, os.WriteFile(filepath.Join(npmDir, "npm"), []byte(npm), 0o755))

	vars := func(shard int) map[string]string {
		return map[string]string{
			"github.run_id": "4242", "github.run_attempt": "1", "github.workspace": ws,
			"secrets.REPLAY_STORE_KEY_ID": s3test.AccessKey, "secrets.REPLAY_STORE_SECRET": s3test.SecretKey,
			"secrets.ANTHROPIC_API_KEY": "test-api-key", "matrix.shard": strconv.Itoa(shard), "strategy.job-total": strconv.Itoa(total),
		}
	}
	eval := func(s string, v map[string]string) string {
		return ghExpression.ReplaceAllStringFunc(s, func(m string) string {
			name := ghExpression.FindStringSubmatch(m)[1]
			val, ok := v[name]
			require.True(t, ok, "workflow expression %q has no value in the test", name)
			return val
		})
	}
	built := false
	// runJob runs a job's run steps in order and returns the first failing
	// step's output and code (0: all passed).
	runJob := func(job string, shard int, offline bool) (string, int) {
		path := []string{npmDir, globalBin, "/usr/local/go/bin", "/usr/bin", "/bin"}
		if gobin, err := exec.LookPath("go"); err == nil {
			path = append([]string{filepath.Dir(gobin)}, path...)
		}
		ghPath := filepath.Join(t.TempDir(), "github_path")
		require.NoError(t, os.WriteFile(ghPath, nil, 0o644))
		for _, st := range wf.Jobs[job].Steps {
			if st.Run == "" {
				continue // actions: checkout (the symlink above), setup-go and setup-node (this machine's)
			}
			if st.Name == "Build replay from source" && built {
				// Every job builds the same binary into the one RUNNER_TEMP here: once is enough.
				if err := os.WriteFile(ghPath, []byte(filepath.Join(runnerTemp, "bin")+"\n"), 0o644); err != nil {
					return err.Error(), 1
				}
				continue
			}
			env := map[string]string{"GITHUB_WORKSPACE": ws, "RUNNER_TEMP": runnerTemp, "GITHUB_PATH": ghPath, "PWD": ws,
				"HOME": t.TempDir(), "AWS_ENDPOINT_URL_S3": "http://" + srv.Endpoint, "AWS_EC2_METADATA_DISABLED": "true",
				"GOCACHE": os.Getenv("GOCACHE"), "GOMODCACHE": os.Getenv("GOMODCACHE"), "GOFLAGS": "-mod=mod", "TMPDIR": t.TempDir()}
			if env["GOCACHE"] == "" {
				out, _ := exec.Command("go", "env", "GOCACHE", "GOMODCACHE").Output()
				lines := strings.Fields(string(out))
				if len(lines) == 2 {
					env["GOCACHE"], env["GOMODCACHE"] = lines[0], lines[1]
				}
			}
			if offline {
				env["NPM_OFFLINE"] = "1"
			}
			for k, v := range wf.Env {
				env[k] = eval(v, vars(shard))
			}
			for k, v := range st.Env {
				env[k] = eval(v, vars(shard))
			}
			added, err := os.ReadFile(ghPath)
			require.NoError(t, err)
			env["PATH"] = strings.Join(append(strings.Fields(string(added)), path...), ":")
			env["REPLAY_AGENT"] = "builtin:sim" // the one stand-in for the agent itself
			out, code := runScript(t, []string{"bash", "--noprofile", "--norc", "-eo", "pipefail", "-c"}, eval(st.Run, vars(shard)), env)
			if code != 0 {
				return st.Name + ": " + out, code
			}
			built = built || st.Name == "Build replay from source"
		}
		return "", 0
	}

	out, code := runJob("shard", 1, true)
	assert.NotEqual(t, 0, code, "a runner that cannot install the agent fails the shard")
	assert.Contains(t, out, "Install and check the agent CLI")
	for _, k := range wf.Jobs["shard"].Strategy.Matrix.Shard {
		out, code := runJob("shard", k, false)
		require.Equal(t, 0, code, "shard %d: %s", k, out)
	}
	out, code = runJob("merge", 0, false)
	if code != 0 {
		assert.Contains(t, out, "Merge the shards and gate", "only the gate's verdict may fail the merge: %s", out)
	}
	_, err = os.Stat(filepath.Join(ws, "corpus-run", "corpus-result.json"))
	require.NoError(t, err, "the merge wrote the report: %s", out)
	prefixes, _ := filepath.Glob(filepath.Join(srv.Root, "replay-ci", "corpora", "*"))
	assert.Equal(t, []string{filepath.Join(srv.Root, "replay-ci", "corpora", "4242-1")}, prefixes, "the run's own prefix")
}
