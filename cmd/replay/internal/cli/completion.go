package cli

import (
	"bytes"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/replaytool/replay/ab"
	"github.com/replaytool/replay/internal/runfile"
	"github.com/replaytool/replay/report"
)

// addCompletions wires shell completion: PATH arguments complete files and
// directories, DIR arguments directories, `checkpoint show|restore` the checkpoints
// of the current project's shadow repository, and `diff --session` the replay
// sessions recorded in replay-diff.jsonl. Completion only reads.
func addCompletions(f *Factory, root *cobra.Command) {
	root.ValidArgsFunction = completePath(cobra.ShellCompDirectiveDefault)
	for _, c := range root.Commands() {
		switch c.Name() {
		case "plan", "diff":
			c.ValidArgsFunction = completePath(cobra.ShellCompDirectiveDefault)
		case "status":
			c.ValidArgsFunction = completePath(cobra.ShellCompDirectiveFilterDirs)
		case "checkpoint":
			for _, sub := range c.Commands() {
				if sub.Name() == "show" || sub.Name() == "restore" {
					sub.ValidArgsFunction = completeCheckpoints(f)
				}
			}
		}
		if c.Name() == "diff" {
			_ = c.RegisterFlagCompletionFunc("session", completeSessions(f))
		}
	}
}

// shellExamples is the Example of each shell's completion command.
var shellExamples = map[string]string{
	"bash":       "source <(replay completion bash)",
	"zsh":        `replay completion zsh > "${fpath[1]}/_replay"`,
	"fish":       "replay completion fish > ~/.config/fish/completions/replay.fish",
	"powershell": "replay completion powershell | Out-String | Invoke-Expression",
}

// documentCompletion adds cobra's completion command now rather than at Execute,
// so that it gets replay's argument checks, examples and exit status like every
// other command.
func documentCompletion(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() != "completion" {
			continue
		}
		c.Long += exitStatusFor("completion")
		c.Example = "  source <(replay completion bash)\n  replay completion zsh > \"${fpath[1]}/_replay\""
		for _, sh := range c.Commands() {
			sh.Long += exitStatusFor("completion " + sh.Name())
			sh.Example = "  " + shellExamples[sh.Name()]
		}
	}
}

// completePath completes the one path argument with the shell's own file
// completion (dir limits it to directories); nothing after it.
func completePath(dir cobra.ShellCompDirective) cobra.CompletionFunc {
	return func(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return nil, dir
	}
}

// completeCheckpoints lists the checkpoints of the shadow repository --repo and
// --shadow name (the current project's by default): short hashes described by
// their reason, newest first.
func completeCheckpoints(f *Factory) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		o := CheckpointOptions{cmdBase: baseOf(f)}
		o.Repo, _ = cmd.Flags().GetString("repo")
		o.Shadow, _ = cmd.Flags().GetString("shadow")
		s, err := o.openShadow()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		cps, _, err := s.List()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		out := make([]cobra.Completion, 0, len(cps))
		for i := len(cps) - 1; i >= 0; i-- {
			out = append(out, cobra.CompletionWithDesc(cps[i].Short, report.SafeText(cps[i].Reason)))
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
	}
}

// completeSessions lists the replay sessions recorded in the replay-diff.jsonl of
// the pipeline PATH (or the current project) names, newest last as recorded.
func completeSessions(f *Factory) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		var pf PipelineFlags
		if len(args) > 0 {
			pf.Path = args[0]
		}
		pf.Repo, _ = cmd.Flags().GetString("repo")
		pf.Scratch, _ = cmd.Flags().GetString("scratch")
		base := baseOf(f)
		base.Global = globalsOf(cmd)
		pl, err := loadPipeline(base.env(), pf)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		data, err := runfile.ReadFile(filepath.Join(pl.DispatchDir, ab.DiffJSONLFile), runfile.DiffLog)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		seen := map[string]bool{}
		var out []cobra.Completion
		for _, line := range bytes.Split(data, []byte("\n")) {
			r, err := report.ParseDiffLine(line)
			if err != nil || r.ReplaySession == "" || seen[r.ReplaySession] {
				continue
			}
			seen[r.ReplaySession] = true
			out = append(out, cobra.CompletionWithDesc(r.ReplaySession, report.SafeText("replay of "+r.OriginalSession)))
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
	}
}
