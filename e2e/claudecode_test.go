package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/testkit/testtools"
)

// claudeCodeVersion is the Claude Code client the journey is proven with: the
// newest release of the npm package @anthropic-ai/claude-code that still runs on
// Node 20 (later ones need Node 22). .ci/run installs it into
// testtools.Dir("claude-code-"+claudeCodeVersion).
const claudeCodeVersion = "2.1.197"

// claudeBinary returns the Claude Code client to test with: $REPLAY_CLAUDE, else,
// when REPLAY_REQUIRE_CLAUDE is set (CI), the pinned one .ci/run installs or
// `claude` on PATH, and a failure when there is none. Without either setting
// the journey (about 30 s, most of it the client's start) skips, so the README's
// `go test ./...` keeps its minute on a machine where the client happens to be
// installed.
func claudeBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("REPLAY_CLAUDE"); p != "" {
		return p
	}
	how := "npm install --prefix \"$(dirname $(go env GOCACHE))/replay-test-tools/claude-code-" + claudeCodeVersion + "\" @anthropic-ai/claude-code@" + claudeCodeVersion
	if os.Getenv("REPLAY_REQUIRE_CLAUDE") == "" {
		t.Skipf("the Claude Code journey runs with REPLAY_REQUIRE_CLAUDE=1 (the client pinned by .ci/run: %s) or REPLAY_CLAUDE=<path of a claude binary>", how)
	}
	if dir, err := testtools.Dir("claude-code-" + claudeCodeVersion); err == nil {
		p := filepath.Join(dir, "node_modules", ".bin", "claude")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("claude"); err == nil {
		return p
	}
	t.Fatalf("REPLAY_REQUIRE_CLAUDE is set but the Claude Code client is missing: %s (or set REPLAY_CLAUDE)", how)
	return ""
}

// claudeSession runs the real Claude Code client against the scripted model, in
// a HOME of its own inside the test.
type claudeSession struct {
	bin, home, cwd string
	env            []string
}

// run runs claude with args in the session's cwd and returns its stdout; a
// failure fails the test with both streams.
func (c *claudeSession) run(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.bin, args...)
	cmd.Dir, cmd.Env, cmd.Stdin = c.cwd, c.env, strings.NewReader("")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err := cmd.Run()
	t.Logf("claude %s: %s", args[0], time.Since(start).Round(time.Millisecond))
	require.NoError(t, err, "claude %s\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), out.String(), errOut.String())
	return out.String()
}

// pluginFiles are the files of this repository that make up the plugin and its
// marketplace; the test copies them into a local marketplace folder.
var pluginFiles = []string{".claude-plugin/plugin.json", ".claude-plugin/marketplace.json", ".mcp.json", "skills/replay/SKILL.md"}

// TestClaudeCodeJourney drives the real Claude Code client through the journey
// docs/claude-code.md walks through, on the crashed example of `replay demo
// --crashed`: the plugin installed from a local marketplace (and validated
// strictly), replay's MCP server connected, `/replay` bringing the skill's body
// to the model, plan through MCP, the confirmation turn, resume with confirm on
// a server started with --allow-write, the tree restored on disk, and the
// hand-off (work items, next seq, dispatch dir, state) reaching the next turn,
// which continues the manifest. The model is a scripted Messages API server on
// loopback; the client talks to nothing else.
func TestClaudeCodeJourney(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the journey's replay wrapper is a shell script")
	}
	claude := claudeBinary(t)
	t.Parallel()
	s := NewSandbox(t)
	repo, err := filepath.Abs("..")
	require.NoError(t, err)

	// The client's own HOME, onboarding marked done in its config file.
	home := filepath.Join(s.Root, "claude-home")
	require.NoError(t, os.MkdirAll(home, 0o755))
	config := map[string]any{"hasCompletedOnboarding": true, "lastOnboardingVersion": claudeCodeVersion}
	data, _ := json.Marshal(config)
	require.NoError(t, os.WriteFile(filepath.Join(home, ".claude.json"), data, 0o600))

	// replay on the PATH the client sees. Its MCP server starts $MCP_DELAY
	// seconds late when that is set, as on a slow machine.
	bin := filepath.Join(s.Root, "bin")
	require.NoError(t, os.MkdirAll(bin, 0o755))
	wrapper := "#!/bin/sh\nif [ \"$1\" = mcp ]; then sleep \"${MCP_DELAY:-0}\"; fi\nexec '" + binPath + "' \"$@\"\n"
	require.NoError(t, os.WriteFile(filepath.Join(bin, "replay"), []byte(wrapper), 0o755))

	// The crashed example, and the variables its printout says to export.
	example := filepath.Join(s.Root, "example")
	r := s.Run(t, "", "demo", "--crashed", example)
	require.Equal(t, 0, r.Code, r.Stderr)
	exports := regexp.MustCompile(`(?m)^  export (.+)$`).FindStringSubmatch(r.Stdout)
	require.NotNil(t, exports, r.Stdout)
	project := filepath.Join(example, "project")
	assert.Contains(t, r.Stdout, "  cd "+project+"\n")
	assert.Contains(t, r.Stdout, "  claude \"/replay\"\n")
	partial := filepath.Join(project, "internal", "audit", "log.go")
	require.FileExists(t, partial, "the example is crashed: task 3's partial commit is in the tree")

	model := newScriptedModel(t)
	c := &claudeSession{bin: claude, home: home, cwd: project, env: append(strings.Fields(exports[1]),
		"HOME="+home, "TMPDIR="+s.Tmp, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"ANTHROPIC_BASE_URL="+model.srv.URL, "ANTHROPIC_API_KEY=sk-ant-scripted-model",
		"DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1", "DISABLE_ERROR_REPORTING=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "NO_COLOR=1", "GIT_CONFIG_NOSYSTEM=1")}

	// Install that stays: a local marketplace holding this repository's plugin.
	market := filepath.Join(s.Root, "marketplace")
	for _, f := range pluginFiles {
		src, err := os.ReadFile(filepath.Join(repo, f))
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(market, f)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(market, f), src, 0o644))
	}
	out := c.run(t, "plugin", "validate", "--strict", market)
	assert.Contains(t, out, "Validation passed")
	out = c.run(t, "plugin", "validate", "--strict", filepath.Join(market, ".claude-plugin", "plugin.json"))
	assert.Contains(t, out, "Validation passed")
	c.run(t, "plugin", "marketplace", "add", market)
	out = c.run(t, "plugin", "install", "replay@replaytool")
	assert.Contains(t, out, "replay@replaytool")
	// The form users can rely on: with the plugin (its server marked alwaysLoad),
	// the first request of a headless run in plain words carries replay's tools
	// even when the server takes 3 s to start (without alwaysLoad it carries none).
	model.script(modelStep{"the first request of a headless run", func(t *testing.T, req *apiRequest) modelReply {
		for _, tool := range []string{"status", "plan", "state", "diff", "checkpoint_list", "checkpoint_show", "verify"} {
			assert.Contains(t, req.toolNames(), "mcp__plugin_replay_replay__"+tool, "the first request offers the plugin's MCP tools")
		}
		return modelReply{Text: "Nothing to do yet."}
	}})
	slow := *c
	slow.env = append(slices.Clone(c.env), "MCP_DELAY=3")
	slow.run(t, "-p", "resume the pipeline")
	require.False(t, t.Failed(), "the first request carried replay's tools")

	// The write tools come from a second registration, started with --allow-write.
	c.run(t, "mcp", "add-json", "-s", "user", "replay", `{"type":"stdio","command":"replay","args":["mcp","--allow-write"],"alwaysLoad":true}`)
	out = c.run(t, "mcp", "list")
	assert.Regexp(t, `plugin:replay:replay: replay mcp - .*Connected`, out)
	assert.Regexp(t, `(?m)^replay: replay mcp --allow-write - .*Connected`, out)

	skill, err := os.ReadFile(filepath.Join(repo, "skills", "replay", "SKILL.md"))
	require.NoError(t, err)
	journey(t, c, model, string(skill), project)

	// On disk: the tree restored to the checkpoint, the manifest continued.
	assert.NoFileExists(t, partial, "the restore undid task 3's partial commit")
	log, err := exec.Command("git", "-C", project, "log", "--format=%s", "-1").Output()
	require.NoError(t, err)
	assert.NotContains(t, string(log), "task 3 partial", "the branch moved back to the checkpoint")
	assert.True(t, model.done(), "the client played the whole script")
}

// journey plays the three turns of docs/claude-code.md's walk-through.
func journey(t *testing.T, c *claudeSession, model *scriptedModel, skill, project string) {
	const planTool, resumeTool = "mcp__plugin_replay_replay__plan", "mcp__replay__resume"
	heading := skill[strings.Index(skill, "\n# "):]
	heading = strings.TrimSpace(heading[:strings.Index(heading[1:], "\n")+1])
	var plan struct {
		Source   string              `json:"source"`
		NextSeq  int                 `json:"next_seq"`
		Redo     []struct{ Seq int } `json:"redo"`
		Warnings []string            `json:"warnings"`
	}
	var handOff struct {
		Plan struct {
			Source  string `json:"source"`
			NextSeq int    `json:"next_seq"`
			Redo    []struct {
				Seq  int    `json:"seq"`
				Role string `json:"role"`
				Task string `json:"task"`
			} `json:"redo"`
		} `json:"plan"`
		Restore struct {
			Reason string `json:"reason"`
		} `json:"restore"`
		State struct {
			Skill string `json:"skill"`
			Phase string `json:"phase"`
		} `json:"compression_state"`
	}
	var dispatchDir, handOffText string
	model.script(
		modelStep{"the skill reaches the model", func(t *testing.T, req *apiRequest) modelReply {
			assert.Contains(t, req.allText(), heading, "/replay brings the skill's body to the model")
			for _, tool := range []string{"status", "plan", "state", "diff", "checkpoint_list", "checkpoint_show", "verify"} {
				assert.Contains(t, req.toolNames(), "mcp__plugin_replay_replay__"+tool, "the first request offers the plugin's MCP tools")
			}
			assert.Contains(t, req.toolNames(), resumeTool, "the write server offers resume")
			return modelReply{Text: "Using replay to resume the interrupted pipeline.", Tool: planTool, ToolInput: map[string]any{}}
		}},
		modelStep{"plan through MCP", func(t *testing.T, req *apiRequest) modelReply {
			res, ok := req.result()
			assert.True(t, ok, "the plan tool's result comes back")
			assert.False(t, res.IsError, res.text())
			assert.NoError(t, json.Unmarshal([]byte(jsonPart(res.text())), &plan), res.text())
			assert.Equal(t, 21, plan.NextSeq, "seq 20 is only in the torn line and never reused")
			assert.Contains(t, res.text(), "pre-wave-2")
			return modelReply{Text: "Replay resumes at Phase 3, wave 2 (checkpoint pre-wave-2); seqs 1 to 18 are kept, the partial commit of task 3 is undone.\n\n" +
				"About to restore the working directory to checkpoint pre-wave-2. This resets uncommitted changes; replay keeps a pre-restore-safety checkpoint you can go back to. Proceed? [yes / no]"}
		}},
	)
	out := c.run(t, "-p", "/replay", "--allowedTools", planTool)
	require.False(t, t.Failed(), "turn 1 (/replay, plan, the question) went as scripted")
	assert.Contains(t, out, "Proceed? [yes / no]")
	_, err := os.Stat(filepath.Join(project, "internal", "audit", "log.go"))
	require.NoError(t, err, "nothing is restored before the yes")

	model.script(
		modelStep{"the confirmation turn", func(t *testing.T, req *apiRequest) modelReply {
			assert.Contains(t, req.allText(), "Proceed? [yes / no]", "the question is in the conversation")
			last := req.lastUser()
			if assert.NotEmpty(t, last) {
				assert.Equal(t, "yes", strings.TrimSpace(last[len(last)-1].text()), "the user's answer")
			}
			return modelReply{Tool: resumeTool, ToolInput: map[string]any{"confirm": true}}
		}},
		modelStep{"resume with confirm", func(t *testing.T, req *apiRequest) modelReply {
			res, ok := req.result()
			assert.True(t, ok, "the resume tool's result comes back")
			assert.False(t, res.IsError, res.text())
			assert.NoError(t, json.Unmarshal([]byte(jsonPart(res.text())), &handOff), res.text())
			assert.Equal(t, "pre-wave-2", handOff.Restore.Reason)
			assert.Len(t, handOff.Plan.Redo, 1)
			dispatchDir = filepath.Dir(handOff.Plan.Source)
			handOffText = res.text()
			assert.Equal(t, 21, handOff.Plan.NextSeq)
			assert.NotEmpty(t, handOff.State.Skill)
			assert.NotEmpty(t, handOff.State.Phase)
			return modelReply{Text: "Restored to pre-wave-2."}
		}},
	)
	out = c.run(t, "-p", "--continue", "yes", "--allowedTools", resumeTool)
	require.False(t, t.Failed(), "turn 2 (yes, resume) went as scripted")
	require.Len(t, handOff.Plan.Redo, 1)
	assert.Contains(t, out, "Restored to pre-wave-2.")

	// The next turn receives the hand-off and continues the manifest with it.
	newFile := filepath.Join(dispatchDir, fmt.Sprintf("%d-%s.md", handOff.Plan.NextSeq, handOff.Plan.Redo[0].Role))
	model.script(
		modelStep{"the hand-off reaches the next turn", func(t *testing.T, req *apiRequest) modelReply {
			assert.Contains(t, req.allText(), handOffText, "the next turn receives the resume tool's hand-off as it came")
			seqCmd := "replay manifest seq --dir " + dispatchDir
			return modelReply{Tool: "Bash", ToolInput: map[string]any{"command": seqCmd, "description": "Take the next seq"}}
		}},
		modelStep{"a new seq from the manifest", func(t *testing.T, req *apiRequest) modelReply {
			res, ok := req.result()
			assert.True(t, ok)
			assert.Equal(t, fmt.Sprint(handOff.Plan.NextSeq), strings.TrimSpace(res.text()), "the seq the hand-off announced")
			redo := handOff.Plan.Redo[0]
			before := fmt.Sprintf("replay manifest before --dir %s --seq %d --file %s --role %s --phase 3 --task %s",
				dispatchDir, handOff.Plan.NextSeq, newFile, redo.Role, strings.TrimPrefix(redo.Task, "t"))
			return modelReply{Tool: "Bash", ToolInput: map[string]any{"command": before, "description": "Record the re-dispatch"}}
		}},
		modelStep{"the re-dispatch recorded", func(t *testing.T, req *apiRequest) modelReply {
			res, ok := req.result()
			assert.True(t, ok)
			assert.Contains(t, res.text(), "dispatched seq 21")
			return modelReply{Text: "Re-dispatched task 3 as seq 21."}
		}},
	)
	out = c.run(t, "-p", "--continue", "go on", "--allowedTools", "Bash(replay manifest:*)")
	require.False(t, t.Failed(), "turn 3 (the hand-off, the manifest continued) went as scripted")
	assert.Contains(t, out, "Re-dispatched task 3 as seq 21.")
	manifest, err := os.ReadFile(filepath.Join(dispatchDir, "manifest.jsonl"))
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(manifest)), "\n")
	assert.Contains(t, lines[len(lines)-1], `"seq":21`, "the manifest continues at the announced seq")
	assert.NotContains(t, lines[len(lines)-1], "model_profile", "in the example manifest's own (older) convention")
	assert.FileExists(t, filepath.Join(dispatchDir, "manifest.jsonl.torn"), "the torn line was set aside at the first append")
}

// jsonPart returns the JSON document in a tool result: the text from its first
// '{' to its last '}' (a summary line may come before it).
func jsonPart(s string) string {
	i, j := strings.Index(s, "{"), strings.LastIndex(s, "}")
	if i < 0 || j < i {
		return s
	}
	return s[i : j+1]
}
