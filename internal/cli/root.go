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

const exitStatusHelp = `
EXIT STATUS
  0  done
  1  failure
  2  usage error
  3  refused by a safety guard (branch mismatch, confirmation declined,
     restore needed but no TTY and no --yes, another replay is running)
  4  nothing to resume (manifest not found, or empty or entirely corrupt)`

// Main runs replay with args in this process and returns the exit code.
func Main(args []string) int {
	f := NewFactory()
	cmd := NewCmdRoot(f)
	cmd.SetArgs(args)
	return Execute(f, cmd)
}

// Execute runs cmd, prints the error (one line) to stderr and returns the exit code.
func Execute(f *Factory, cmd *cobra.Command) int {
	cmd.SetIn(f.IOStreams.In)
	cmd.SetOut(f.IOStreams.Out)
	cmd.SetErr(f.IOStreams.ErrOut)
	err := cmd.Execute()
	if err == nil {
		return exitcode.OK
	}
	var scriptErr *scriptError
	if errors.As(err, &scriptErr) {
		fmt.Fprintln(f.IOStreams.ErrOut, scriptErr.msg)
		return scriptErr.code
	}
	code := exitcode.Of(err)
	if code == exitcode.Failure && isCobraUsageError(err) {
		code = exitcode.Usage
	}
	fmt.Fprintf(f.IOStreams.ErrOut, "replay: %s\n", report.SafeText(strings.TrimSpace(err.Error())))
	if code == exitcode.Usage {
		fmt.Fprintln(f.IOStreams.ErrOut, "Run 'replay --help' for usage.")
	}
	return code
}

func isCobraUsageError(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand flag", "accepts ", "requires at least", "invalid argument", "flag needs an argument", "required flag"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// usageError wraps a message as a usage error (exit 2).
func usageError(format string, args ...any) error {
	return exitcode.Wrap(exitcode.ErrUsage, fmt.Sprintf(format, args...))
}

// NewCmdRoot builds the root command with every subcommand registered.
func NewCmdRoot(f *Factory) *cobra.Command {
	root := NewCmdResume(f, nil)
	root.SilenceErrors = true
	root.SilenceUsage = true
	root.Version = Version
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return exitcode.Wrap(exitcode.ErrUsage, err.Error())
	})
	pf := root.PersistentFlags()
	pf.StringVar(&f.NowFlag, "now", "", "injected clock (RFC 3339) for every time written to a file or the screen")
	pf.BoolVar(&f.JSON, "json", false, "print one JSON document on stdout instead of text")
	pf.BoolVarP(&f.Quiet, "quiet", "q", false, "print no warnings or progress")
	pf.BoolVarP(&f.Verbose, "verbose", "v", false, "print more detail on stderr")
	pf.Var(&f.Format, "format", "draw tables as markdown or text (default: text on a terminal, markdown otherwise)")

	root.AddCommand(
		NewCmdPlan(f, nil),
		NewCmdStatus(f, nil),
		NewCmdManifest(f),
		NewCmdCheckpoint(f),
		NewCmdDiff(f, nil),
		NewCmdDemo(f, nil),
		NewCmdVersion(f),
		NewCmdBenchFixture(f),
	)
	return root
}
