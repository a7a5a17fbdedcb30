package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/replaytool/replay/internal/fixture"
)

// demoCrashedRun builds the crashed example in opts.Crashed and leaves it
// crashed: nothing is planned, restored or replayed. It prints where the example
// is and the commands that open it in Claude Code with the replay plugin, its
// paths given to replay through REPLAY_HOME, REPLAY_TMPDIR and REPLAY_SYSTEM_TMP
// so that Claude Code keeps the user's own HOME.
func demoCrashedRun(opts *DemoOptions) error {
	f := opts.env()
	out := f.IO.Out
	dir, err := filepath.Abs(opts.Crashed)
	if err != nil {
		return fmt.Errorf("demo --crashed %s: %w", opts.Crashed, err)
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return usageError("demo --crashed %s: the directory is not empty; give a new or empty directory", opts.Crashed)
	}
	p, err := fixture.Build(dir, fixture.Options{})
	if err != nil {
		return fmt.Errorf("demo: building the example pipeline: %w", err)
	}
	self, err := demoCommand(p.Root, true)
	if err != nil {
		return err
	}
	env := demoCrashedEnv(p)
	fmt.Fprintf(out, "Built the crashed example in %s (nothing restored yet):\n", p.Root)
	fmt.Fprintf(out, "- project     %s (branch %s, wave 2 of Phase 3 crashed mid-task)\n", p.Project, p.Branch)
	fmt.Fprintf(out, "- scratch     %s\n", p.Scratch)
	fmt.Fprintf(out, "- checkpoints %s\n", p.Shadow)
	fmt.Fprintf(out, "\nResume it in Claude Code, with the replay plugin installed (docs/claude-code.md).\n")
	fmt.Fprintf(out, "Claude Code keeps your HOME; the replay it starts reads the example's home,\n")
	fmt.Fprintf(out, "TMPDIR and /tmp from REPLAY_HOME, REPLAY_TMPDIR and REPLAY_SYSTEM_TMP:\n\n")
	fmt.Fprintf(out, "  cd %s\n", quoteArgs([]string{p.Project})[0])
	fmt.Fprintf(out, "  export %s\n", quoteEnv(env))
	fmt.Fprintf(out, "  claude \"/replay\"\n")
	fmt.Fprintf(out, "\nOr look first, in the same shell:\n\n")
	fmt.Fprintf(out, "  %s plan --explain\n", self)
	fmt.Fprintf(out, "\nThe example stays until you remove it: rm -rf %s\n", quoteArgs([]string{p.Root})[0])
	return nil
}

// demoCrashedEnv returns the variables that point replay at the example p, in
// the order they are printed.
func demoCrashedEnv(p *fixture.Pipeline) [][2]string {
	return [][2]string{{HomeEnv, p.Home}, {TmpEnv, p.Tmp}, {SystemTmpEnv, p.SysTmp}}
}

// quoteEnv renders env as KEY=VALUE words for a shell, values quoted as needed.
func quoteEnv(env [][2]string) string {
	s := ""
	for i, kv := range env {
		if i > 0 {
			s += " "
		}
		s += kv[0] + "=" + quoteArgs([]string{kv[1]})[0]
	}
	return s
}
