package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/replaytool/replay/internal/fixture"
	"github.com/replaytool/replay/internal/iostreams"
	"github.com/replaytool/replay/internal/prompt"
	"github.com/replaytool/replay/internal/runfile"
	"github.com/replaytool/replay/internal/safewrite"
)

// DemoOptions are the flags of `replay demo`.
type DemoOptions struct {
	cmdBase
	Dir  string
	Keep bool
	// Crashed is the directory --crashed builds the example in, without the tour.
	Crashed string
}

// NewCmdDemo builds `replay demo`.
func NewCmdDemo(f *Factory, runF func(*DemoOptions) error) *cobra.Command {
	opts := &DemoOptions{cmdBase: baseOf(f)}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Build a crashed example pipeline in a temp dir and tour replay on it",
		Long: `Build the reference crashed build pipeline (a project on feat/login whose wave 2
crashed mid-task, with its shadow checkpoints, scratch files and dispatch
directory) in a temp dir, then tour replay on it: status, plan, resume, an A/B
replay with a template mutation, the run as it was at a seq, a fork with a
substituted reviewer verdict, the tree of runs, the fork's diff against its
parent, and a replicated A/B replay with a decision. Nothing outside that
directory is touched:
HOME and TMPDIR point inside it for every step.

With --crashed DIR, only build the crashed example in DIR (a new or empty
directory), leave it crashed, and print how to open it in Claude Code and
resume it there with /replay. Claude Code keeps your own HOME (your login and
settings); the replay it starts finds the example through REPLAY_HOME,
REPLAY_TMPDIR and REPLAY_SYSTEM_TMP, which stand for HOME, TMPDIR and /tmp in
replay alone.
` + exitStatusFor("demo"),
		Example: `  replay demo
  replay demo --keep
  replay demo --dir ./replay-demo
  replay demo --crashed ~/replay-demo`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Global = globalsOf(cmd)
			if opts.Global.JSON {
				return usageError("demo --json: the demo is a guided tour in text and has no JSON form; run the commands it prints with --json")
			}
			if opts.Crashed != "" && (opts.Dir != "" || opts.Keep) {
				return usageError("demo --crashed builds the example without the tour: give it alone, without --dir or --keep")
			}
			if runF != nil {
				return runF(opts)
			}
			if opts.Crashed != "" {
				return demoCrashedRun(opts)
			}
			return demoRun(opts)
		},
	}
	cmd.Flags().StringVar(&opts.Dir, "dir", "", "build the example in `DIR` instead of a temp dir (kept afterwards)")
	cmd.Flags().BoolVar(&opts.Keep, "keep", false, "keep the temp dir after the tour")
	cmd.Flags().StringVar(&opts.Crashed, "crashed", "", "only build the crashed example in `DIR` (no tour) and print how to resume it in Claude Code")
	return cmd
}

// demoStep is one command of the tour.
type demoStep struct {
	title string
	say   string
	args  []string
	// wantCode is the exit code this step is expected to end with.
	wantCode int
}

func demoRun(opts *DemoOptions) error {
	f := opts.env()
	out := f.IO.Out
	dir, keep := opts.Dir, opts.Keep || opts.Dir != ""
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp(tmpDir(f), "replay-demo-"); err != nil {
			return fmt.Errorf("demo: cannot make a temp dir: %w", err)
		}
	} else if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return usageError("demo --dir %s: the directory is not empty; give a new or empty directory", dir)
	}
	if !keep {
		defer safewrite.RemoveAllPath(dir)
	}
	start := time.Now()
	p, err := fixture.Build(dir, fixture.Options{})
	if err != nil {
		return fmt.Errorf("demo: building the example pipeline: %w", err)
	}
	if f.Global.Verbose {
		fmt.Fprintf(out, "# replay demo\n\nBuilt a crashed build pipeline in %s:\n", p.Root)
	} else {
		fmt.Fprintf(out, "# replay demo\n\nBuilt a crashed build pipeline in $DEMO:\n")
	}
	if f.Global.Verbose {
		fmt.Fprintf(out, "- project     %s (branch %s)\n", p.Project, p.Branch)
		fmt.Fprintf(out, "- scratch     %s\n", p.Scratch)
		fmt.Fprintf(out, "- checkpoints %s\n", p.Shadow)
		fmt.Fprintf(out, "- dispatches  %s (live copy %s)\n", p.DurableDispatchDir, p.LiveDispatchDir)
		fmt.Fprintf(out, "Every step runs with HOME=%s, TMPDIR=%s, in the project, with --now %s.\n", p.Home, p.Tmp, p.Now.UTC().Format(time.RFC3339))
	} else {
		demoWrap(out, fmt.Sprintf("- the project in $DEMO/project (branch %s), its checkpoints and scratch dir under $DEMO/home, its live dispatch dir under $DEMO/tmp. Every step runs in the project with HOME=$DEMO/home, TMPDIR=$DEMO/tmp and --now %s, and shows the lines of its output that matter; --verbose shows every command's whole output.",
			p.Branch, p.Now.UTC().Format(time.RFC3339)), demoWidth(f), "", "  ")
	}

	now := p.Now.UTC().Format(time.RFC3339)
	stricter, err := writeStricterTemplate(p)
	if err != nil {
		return err
	}
	steps := []demoStep{
		{title: "Which pipelines crashed?", say: "status finds the marker the crashed run left behind and where it would resume.", args: []string{"status"}},
		{title: "Plan the resume (read-only)", say: "plan reads the damaged manifest (a torn last line, a retried seq, a null phase), verifies every completed dispatch against commits and output files, and correlates the checkpoint. Not a byte changes. Next seq is 21, not 20: seq 20 appears only in the torn last line, and a seq is never reused.", args: []string{"plan", p.Scratch, "--explain"}},
		{title: "The safety guard", say: "Without a terminal and without --yes, a resume that needs a restore is refused (exit 3) and nothing changes.", args: []string{"resume", p.Scratch}, wantCode: 3},
		{title: "Resume", say: "With --yes: a pre-restore-safety checkpoint and a ref keep the current state, the tree is restored to the newest pre-wave-2 checkpoint, the branch moves back, and the Compression State Block is handed to the orchestrator.", args: []string{"resume", p.Scratch, "--yes"}},
		{title: "A/B replay", say: "Replay the pipeline from the wave whose reviewers use a stricter template, in an isolated worktree under the scratch dir, with the built-in simulated agent (its summaries and durations are simulated, so no speed-up is claimed), and compare the outcomes with the original run. Your working tree, branch and the original manifest lines stay as they are.", args: []string{p.Scratch, "--mutate", "build-reviewer-prompt.md=" + stricter, "--templates", p.Templates, "--diff", "--agent", "builtin:sim"}},
	}
	self, err := demoCommand(p.Root, keep)
	if err != nil {
		return err
	}
	self = quoteArgs([]string{self})[0]
	if !f.Global.Verbose {
		fmt.Fprintf(out, "  DEMO=%s\n", quoteArgs([]string{p.Root})[0])
		if self != "replay" {
			fmt.Fprintf(out, "  replay is %s\n", self)
		}
	}
	var abSession string
	for i, s := range steps {
		if err := demoStepRun(f, p, self, i+1, s, now); err != nil {
			return err
		}
		if len(s.args) > 0 && s.args[0] == p.Scratch {
			abSession = lastABSession(p.ManifestPath)
		}
	}
	if err := demoTimeTravel(f, p, self, len(steps)); err != nil {
		return err
	}
	replicated := demoStep{title: "Replicated A/B replay with a decision", say: "One run per arm is an anecdote. Run the baseline (the same dispatches with the current templates) and the mutated arm 14 times each, two at a time, each replica in its own worktree, with the simulated agent in its seeded stochastic mode (5% of dispatches flake). The decision is anytime-valid: a false ADOPT or REJECT at most 5% of the time however many replicas are added later (--more N) and whenever one stops (see docs/ab-statistics.md). The report gives the evidence behind it, a confidence sequence for each difference, the metrics over the passing replicas, and the noise floor of the baseline against itself. Every figure comes from the simulated agent. UNDECIDED would mean these replicas cannot tell the arms apart yet: --more N adds replicas to the same experiment.", args: []string{p.Scratch, "--mutate", "build-reviewer-prompt.md=" + stricter, "--templates", p.Templates, "--replicas", "14", "--jobs", "2", "--agent", "builtin:sim?flake=0.05&seed=7"}}
	if err := demoStepRun(f, p, self, len(steps)+demoTimeTravelSteps+1, replicated, now); err != nil {
		return err
	}
	if keep {
		writeLookFurther(f, p, self, abSession, now)
	} else {
		fmt.Fprintf(out, "\nThe example was removed; run `replay demo --keep` (or --dir DIR) to keep it.\n")
	}
	f.Printer().Infof("demo finished in %s", time.Since(start).Round(time.Millisecond))
	return nil
}

// runDemoStep runs one replay command in-process with the demo's environment and
// returns its exit code. Its tables are drawn as the demo's own would be: the
// terminal's text grid, wrapped to its width, on a terminal; markdown otherwise.
//
// With capture, both of the step's streams (its warnings too) go there instead of
// the demo's own.
func runDemoStep(f *runEnv, p *fixture.Pipeline, args []string, capture io.Writer) int {
	env := map[string]string{"HOME": p.Home, "TMPDIR": p.Tmp, SystemTmpEnv: p.SysTmp, "NO_COLOR": "1", "REPLAY_PROMPT_DISABLED": "1"}
	style := f.TableStyle()
	if style.Width > 0 {
		env["COLUMNS"] = fmt.Sprint(style.Width)
	}
	ios := &iostreams.IOStreams{In: strings.NewReader(""), Out: f.IO.Out, ErrOut: f.IO.ErrOut}
	printer := f.Printer()
	if capture != nil {
		ios.Out, ios.ErrOut, printer = capture, capture, nil
	}
	ios.SetEnv(func(k string) string { return env[k] })
	sub := &Factory{
		IOStreams: ios,
		Prompter:  func() prompt.Prompter { return &prompt.Scripted{} },
		Getenv:    func(k string) string { return env[k] },
		Getwd:     func() (string, error) { return p.Project, nil },
		// One printer for the whole demo: a warning the steps share prints once.
		printer: printer,
	}
	format := "--format=markdown"
	if style.Text {
		format = "--format=text"
	}
	cmd := NewCmdRoot(sub)
	cmd.SetArgs(append(append([]string{}, args...), format))
	return Execute(sub, cmd)
}

// writeStricterTemplate writes the demo's A/B variant of the reviewer template: the
// original with three more "must" checks, which make the simulated reviewer FAIL.
func writeStricterTemplate(p *fixture.Pipeline) (string, error) {
	orig, err := runfile.ReadFile(filepath.Join(p.Templates, "build-reviewer-prompt.md"), runfile.Template)
	if err != nil {
		return "", fmt.Errorf("demo: %w", err)
	}
	stricter := string(orig) + "\n## Stricter review\n- Every public function must have a test.\n- Errors must name the file and the line.\n- The change must not add a dependency.\n"
	path := filepath.Join(p.Root, "stricter-build-reviewer.md")
	return path, safewrite.WriteFile(path, []byte(stricter), 0o644)
}

func quoteArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if strings.ContainsAny(a, " \t'\"$?&;|<>()*") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return out
}
