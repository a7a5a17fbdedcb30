package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/replaytool/replay/internal/exitcode"
	"github.com/replaytool/replay/report"
)

// Version is the version printed by `replay version`; set with -ldflags at release.
var Version = "0.1.0-dev"

// Main runs replay with args in this process and returns the exit code.
func Main(args []string) int {
	f := NewFactory()
	cmd := NewCmdRoot(f)
	cmd.SetArgs(args)
	return Execute(f, cmd)
}

// Execute runs cmd, prints the error (one line) to stderr and returns the exit code.
func Execute(f *Factory, cmd *cobra.Command) int {
	code, _ := execute(f, cmd)
	return code
}

// execute is Execute that also returns the error line it printed, without the
// "replay: " prefix ("" when the command succeeded).
func execute(f *Factory, cmd *cobra.Command) (int, string) {
	cmd.SetIn(f.IOStreams.In)
	cmd.SetOut(f.IOStreams.Out)
	cmd.SetErr(f.IOStreams.ErrOut)
	ran, err := cmd.ExecuteC()
	if err == nil {
		return exitcode.OK, ""
	}
	var scriptErr *scriptError
	if errors.As(err, &scriptErr) {
		fmt.Fprintln(f.IOStreams.ErrOut, scriptErr.msg)
		return scriptErr.code, scriptErr.msg
	}
	path := "replay"
	if ran != nil && ran.HasParent() {
		path = ran.CommandPath()
	}
	return printError(f, err, resumes(ran), path)
}

// printError prints a command's error as the CLI does ("replay: MESSAGE", escaped,
// and where to find the usage after a usage error) and returns its exit code and
// message. resumes says the command resumes a run (the manifest readers' "Cannot
// resume." stays); path is the command's, named in the usage hint.
func printError(f *Factory, err error, resumes bool, path string) (int, string) {
	code := exitCodeOf(err)
	msg := strings.TrimSpace(err.Error())
	if !resumes {
		// The manifest readers say "Cannot resume."; only resume and plan resume.
		msg = strings.TrimSuffix(strings.ReplaceAll(msg, " Cannot resume.", ""), "Cannot resume.")
	}
	msg = report.SafeText(msg)
	fmt.Fprintf(f.IOStreams.ErrOut, "replay: %s\n", msg)
	if code == exitcode.Usage {
		fmt.Fprintf(f.IOStreams.ErrOut, "Run '%s --help' for usage.\n", path)
	}
	return code, msg
}

// resumes reports whether cmd is one of the commands that resume a run, the root
// and plan, or the hidden manifest stats, which reports what they would read.
func resumes(cmd *cobra.Command) bool {
	return cmd != nil && (!cmd.HasParent() || cmd.Name() == "plan" || cmd.Name() == "stats")
}

// NewCmdRoot builds the root command with every subcommand registered.
func NewCmdRoot(f *Factory) *cobra.Command {
	f.mapEnv()
	root := NewCmdResume(f, nil)
	root.SilenceErrors = true
	root.SilenceUsage = true
	root.Version = Version
	root.SetFlagErrorFunc(flagError)
	root.SuggestionsMinimumDistance = 2
	root.Args = rootArgs(f)
	root.SetHelpCommand(newCmdHelp())
	pf := root.PersistentFlags()
	// The flags are parsed here; each command copies them into its options
	// (globalsOf) when it runs.
	addGlobalFlags(pf, &globalOptions{})

	root.AddCommand(
		NewCmdPlan(f, nil),
		NewCmdStatus(f, nil),
		NewCmdState(f, nil),
		NewCmdFork(f, nil),
		NewCmdLineage(f, nil),
		NewCmdManifest(f),
		NewCmdCheckpoint(f),
		NewCmdDiff(f, nil),
		NewCmdDemo(f, nil),
		NewCmdGate(f, nil),
		NewCmdCorpus(f, nil),
		NewCmdReport(f, nil),
		NewCmdVerify(f, nil),
		NewCmdVersion(f),
		NewCmdPush(f, nil),
		NewCmdPull(f, nil),
		NewCmdMCP(f, nil),
		NewCmdSkill(f),
	)
	root.MarkFlagsMutuallyExclusive("quiet", "verbose")
	documentCompletion(root)
	typeArgs(root)
	addCompletions(f, root)
	return root
}

// newCmdHelp is cobra's help command, except that an unknown topic is a usage
// error (exit 2) instead of a help page and exit 0.
func newCmdHelp() *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		RunE: func(c *cobra.Command, args []string) error {
			cmd, rest, err := c.Root().Find(args)
			if err != nil || cmd == nil || len(rest) > 0 {
				return usageError("unknown help topic %q: 'replay help' lists the commands", strings.Join(args, " "))
			}
			return cmd.Help()
		},
	}
}
