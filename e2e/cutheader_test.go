package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A task-less scanner in flight whose dispatch file is gone, while the file of
// a second scanner, with no manifest line yet, was being written when the
// crash came: cut inside its header (crash simulator seed 18127: inside the
// task's key). Through the binary: the resume stops before it changes
// anything or starts an agent, naming the cut file, because a prompt rebuilt
// from the template cannot tell which scan seq 2 was; the plan warns. A cut
// file whose phase is whole and another (a triager's phase) rules that out:
// seq 2 is rebuilt.
func TestCutSiblingHeaderRefusesTheRebuildThroughTheCLI(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, cut string
		refused   bool
	}{
		{"cut inside the task's key", "# Dispatch: scanner\n**Pipeline:** audit | **Phase:** scan | **Tas", true},
		{"cut before the phase", "# Dispatch: scanner\n**Pipeline:** au", true},
		{"cut after another phase", "# Dispatch: scanner\n**Pipeline:** audit | **Phase:** triage | **Tas", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := NewSandbox(t)
			buildScript(t, s, wordsPipeline+`
dispatch 2 scanner scanner scan - "2026-04-07 09:06:00" audit "Scan services/auth for leaked secrets. Write your findings to 2-scanner-output.md."
rm "$DD/2-scanner.md"
`)
			dd := filepath.Join(s.Tmp, "crucible-dispatch-1775566800")
			require.NoError(t, os.WriteFile(filepath.Join(dd, "3-scanner.md"), []byte(tc.cut), 0o644))
			tmpl := filepath.Join(s.Root, "templates")
			require.NoError(t, os.MkdirAll(tmpl, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(tmpl, "scanner-prompt.md"), []byte("You are the scanner. Scan the package the orchestrator names.\n"), 0o644))
			project := filepath.Join(s.Root, "project")
			now := "--now=2026-04-07T12:00:00Z"

			plan := s.Run(t, project, "plan", "--json", "--templates", tmpl, now)
			require.Equal(t, 0, plan.Code, plan.Stderr)
			var got struct {
				Preflight []string `json:"preflight"`
			}
			require.NoError(t, json.Unmarshal([]byte(plan.Stdout), &got))
			lines := strings.Join(got.Preflight, "\n")
			if !tc.refused {
				assert.Contains(t, lines, "seq 2 (scanner): dispatch file gone; it will be rebuilt from the template")
				return
			}
			assert.Contains(t, lines, "warning: seq 2 (scanner, phase scan, no task)")
			assert.Contains(t, lines, "seq 3 of the same role and phase, whose dispatch file the crash cut inside its header, ran beside it")

			before := digest(t, s.Root)
			ran := filepath.Join(s.Root, "agent-ran")
			r := s.Run(t, project, "--yes", "--agent", "touch "+ran, "--templates", tmpl, now)
			assert.NotEqual(t, 0, r.Code, r.Stdout)
			assert.Contains(t, r.Stderr, "cannot tell which work seq 2 was")
			assert.Contains(t, r.Stderr, "nothing was changed")
			assert.NoFileExists(t, ran, "no agent starts")
			assert.Equal(t, before, digest(t, s.Root), "nothing is written")
		})
	}
}
