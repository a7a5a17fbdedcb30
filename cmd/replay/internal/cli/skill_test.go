package cli_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/skills"
)

// repoRoot is the repository's root, from this package's directory.
const repoRoot = "../../../.."

func TestPluginManifestAndMCPRegistration(t *testing.T) {
	t.Parallel()
	var plugin struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		Skills      string `json:"skills"`
	}
	data, err := os.ReadFile(filepath.Join(repoRoot, ".claude-plugin", "plugin.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &plugin))
	assert.Equal(t, "replay", plugin.Name)
	assert.NotEmpty(t, plugin.Description)
	assert.DirExists(t, filepath.Join(repoRoot, plugin.Skills, skills.ReplayName))

	var mcp struct {
		Servers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	data, err = os.ReadFile(filepath.Join(repoRoot, ".mcp.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &mcp))
	require.Contains(t, mcp.Servers, "replay")
	assert.Equal(t, "replay", mcp.Servers["replay"].Command)
	assert.Equal(t, []string{"mcp"}, mcp.Servers["replay"].Args)
}

// frontmatter returns the key: value lines between the leading --- lines.
func frontmatter(t *testing.T, doc string) map[string]string {
	t.Helper()
	require.True(t, strings.HasPrefix(doc, "---\n"), "SKILL.md starts with frontmatter")
	end := strings.Index(doc[4:], "\n---\n")
	require.GreaterOrEqual(t, end, 0, "the frontmatter is closed")
	out := map[string]string{}
	for _, line := range strings.Split(doc[4:4+end], "\n") {
		k, v, ok := strings.Cut(line, ":")
		require.True(t, ok, "frontmatter line %q", line)
		out[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return out
}

func TestSkillFrontmatterAndShippedCopy(t *testing.T) {
	t.Parallel()
	onDisk, err := os.ReadFile(filepath.Join(repoRoot, "skills", skills.ReplayName, "SKILL.md"))
	require.NoError(t, err)
	assert.Equal(t, string(onDisk), string(skills.Replay), "the binary embeds the plugin's SKILL.md")
	fm := frontmatter(t, string(skills.Replay))
	assert.Equal(t, "replay", fm["name"])
	desc, err := strconv.Unquote(fm["description"])
	require.NoError(t, err, "the description is one double-quoted YAML string, as upstream writes it")
	assert.NotContains(t, desc, `"`)
	fm["description"] = desc
	for _, trigger := range []string{"/replay", "'resume pipeline'", "'replay build'", "'A/B test templates'"} {
		assert.Contains(t, fm["description"], trigger)
	}
	assert.LessOrEqual(t, len(fm["description"]), 1024)
}

func TestSkillInstall(t *testing.T) {
	t.Parallel()
	s := NewSandbox(t)
	installed := filepath.Join(s.Home, ".claude", "skills", "replay", "SKILL.md")
	r := s.Run(t, "", "skill", "install")
	require.Equal(t, 0, r.Code, r.Stderr)
	data, err := os.ReadFile(installed)
	require.NoError(t, err)
	assert.Equal(t, string(skills.Replay), string(data), "the installed copy is the shipped one")
	assert.Contains(t, r.Stdout, "installed")

	r = s.Run(t, "", "skill", "install")
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "already installed and up to date")

	older := "---\nname: replay\ndescription: \"an older version\"\n---\n"
	require.NoError(t, os.WriteFile(installed, []byte(older), 0o644))
	r = s.Run(t, "", "skill", "install")
	assert.Equal(t, 3, r.Code, "a copy install did not write is not replaced")
	sum := sha256.Sum256([]byte(older))
	require.NoError(t, os.WriteFile(filepath.Join(filepath.Dir(installed), ".replay-installed-sha256"), []byte(hex.EncodeToString(sum[:])+"\n"), 0o644))
	r = s.Run(t, "", "skill", "install")
	require.Equal(t, 0, r.Code, "an unedited older version install wrote is replaced: %s", r.Stderr)
	data, _ = os.ReadFile(installed)
	assert.Equal(t, string(skills.Replay), string(data))

	edited := string(skills.Replay) + "\nMy own note.\n"
	require.NoError(t, os.WriteFile(installed, []byte(edited), 0o644))
	r = s.Run(t, "", "skill", "install")
	assert.Equal(t, 3, r.Code, "an edited copy is not overwritten")
	assert.Contains(t, r.Stderr, "--force")
	data, _ = os.ReadFile(installed)
	assert.Equal(t, edited, string(data), "nothing written")

	r = s.Run(t, "", "skill", "install", "--force", "--now", "2026-04-07T14:52:10Z")
	require.Equal(t, 0, r.Code, r.Stderr)
	data, _ = os.ReadFile(installed)
	assert.Equal(t, string(skills.Replay), string(data))
	backup, err := os.ReadFile(installed + ".bak-1775573530")
	require.NoError(t, err)
	assert.Equal(t, edited, string(backup), "the edited copy is kept")

	other := filepath.Join(s.Root, "project-skills")
	r = s.Run(t, "", "skill", "install", "--dir", other)
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.FileExists(t, filepath.Join(other, "replay", "SKILL.md"))

	r = s.Run(t, "", "skill", "show")
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Equal(t, string(skills.Replay), r.Stdout)
}

func TestSkillInstallRefusesALink(t *testing.T) {
	t.Parallel()
	s := NewSandbox(t)
	dir := filepath.Join(s.Root, "skills")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "replay"), 0o755))
	victim := filepath.Join(s.Root, "victim.md")
	require.NoError(t, os.Symlink(victim, filepath.Join(dir, "replay", "SKILL.md")))
	r := s.Run(t, "", "skill", "install", "--dir", dir)
	assert.NotEqual(t, 0, r.Code)
	assert.NoFileExists(t, victim)
}

// skillCommands returns the replay command lines of the skill's ```sh blocks.
func skillCommands(doc string) []string {
	var cmds []string
	for _, block := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(doc, -1) {
		for _, line := range strings.Split(strings.TrimSpace(block[1]), "\n") {
			if strings.HasPrefix(line, "replay ") {
				cmds = append(cmds, line)
			}
		}
	}
	return cmds
}

// shellWords splits a command line at spaces, keeping double-quoted words whole.
func shellWords(line string) []string {
	var words []string
	var cur strings.Builder
	quoted, in := false, false
	for _, r := range line {
		switch {
		case r == '"':
			quoted, in = !quoted, true
		case r == ' ' && !quoted:
			if in {
				words = append(words, cur.String())
				cur.Reset()
			}
			in = false
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}

// TestEveryCommandTheSkillNamesRuns runs, in order, every command of the skill
// against the demo's example pipeline, with the placeholders filled in.
func TestEveryCommandTheSkillNamesRuns(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	stricter := filepath.Join(p.Root, "stricter-build-reviewer.md")
	orig, err := os.ReadFile(filepath.Join(p.Templates, "build-reviewer-prompt.md"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(stricter, append(orig, "\n- Every function must have a test.\n"...), 0o644))
	cmds := skillCommands(string(skills.Replay))
	require.GreaterOrEqual(t, len(cmds), 8)
	seq := ""
	fill := strings.NewReplacer("<run>", p.Scratch, "<dispatch-dir>", filepath.Dir(p.ManifestPath), "<templates>", p.Templates,
		"<agent>", "builtin:sim", "<original.md>", "build-reviewer-prompt.md", "<replacement.md>", stricter,
		"<template>", "build-implementer", "<role>", "build-implementer", "<tier>", "opus", "<one line>", "task 3 done")
	ran := map[string]bool{}
	for _, line := range cmds {
		args := shellWords(fill.Replace(strings.ReplaceAll(line, "<N>", seq)))[1:]
		args = append(args, "--now", now(p))
		r := runGuarded(t, s, p.Project, args...)
		require.Equal(t, 0, r.Code, "%s\n%s", line, r.Stderr)
		if args[0] == "manifest" && args[1] == "seq" {
			seq = strings.TrimSpace(r.Stdout)
			assert.Equal(t, "21", seq)
		}
		ran[args[0]] = true
	}
	for _, want := range []string{"status", "plan", "manifest", "diff", "mcp"} {
		assert.True(t, ran[want], "the skill names replay %s", want)
	}
	assert.Contains(t, string(skills.Replay), "replay <run> --yes")
}
