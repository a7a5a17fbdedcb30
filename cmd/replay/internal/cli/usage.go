package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/replaytool/replay/internal/exitcode"
)

// unknownCommand is the usage error for a word that names no subcommand of cmd,
// with cobra's suggestions (edit distance and prefix) when there are any.
func unknownCommand(cmd *cobra.Command, word string) error {
	msg := fmt.Sprintf("unknown command %q for %q", word, cmd.CommandPath())
	if s := cmd.SuggestionsFor(word); len(s) > 0 {
		msg += "; did you mean " + strings.Join(s, " or ") + "?"
	} else if cmd.HasAvailableSubCommands() {
		msg += fmt.Sprintf("; run '%s --help' for its commands", cmd.CommandPath())
	}
	return usageError("%s", msg)
}

// groupRun is the RunE of a command that only groups subcommands: without
// arguments it prints its help, an argument is an unknown subcommand (exit 2).
func groupRun(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return unknownCommand(cmd, args[0])
	}
	return cmd.Help()
}

// flagError turns pflag's parse errors into usage errors. On a command that groups
// subcommands, a flag error after a word that is no subcommand is reported as the
// unknown command it is (`checkpoint restor x --yes`). A bad boolean value names the
// values that work instead of strconv's message.
func flagError(cmd *cobra.Command, err error) error {
	if cmd.HasSubCommands() && cmd.HasParent() {
		if rest := cmd.Flags().Args(); len(rest) > 0 {
			return unknownCommand(cmd, rest[0])
		}
	}
	var bad *pflag.InvalidValueError
	if errors.As(err, &bad) && bad.GetFlag().Value.Type() == "bool" {
		return usageError("--%s=%s: a switch takes no value, or true or false; write --%s or --%s=false",
			bad.GetFlag().Name, bad.GetValue(), bad.GetFlag().Name, bad.GetFlag().Name)
	}
	if name, ok := strings.CutPrefix(err.Error(), "unknown flag: --"); ok {
		if s := closestFlag(cmd, name); s != "" {
			return usageError("%s; did you mean --%s?", err, s)
		}
	}
	return usageError("%s", err)
}

// rootArgs validates the main command's arguments: at most one PATH, and a single
// argument that does not exist on disk but is close to a subcommand name is a
// mistyped command (`replay stats`), not a PATH.
func rootArgs(f *Factory) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > 1 && !strings.ContainsAny(args[0], `/\.`) && len(cmd.SuggestionsFor(args[0])) > 0 {
			p := args[0]
			if cwd, err := f.Getwd(); err == nil {
				p = filepath.Join(cwd, p)
			}
			if _, err := os.Lstat(p); err != nil {
				return unknownCommand(cmd, args[0]) // `replay chekpoint list`
			}
		}
		if err := cobra.MaximumNArgs(1)(cmd, args); err != nil {
			return err
		}
		if len(args) != 1 || strings.ContainsAny(args[0], `/\.`) {
			return nil
		}
		p := args[0]
		if cwd, err := f.Getwd(); err == nil && !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		if _, err := os.Lstat(p); err == nil {
			return nil
		}
		if len(cmd.SuggestionsFor(args[0])) > 0 {
			return unknownCommand(cmd, args[0])
		}
		return nil
	}
}

// typeArgs walks the command tree: every argument validator's error becomes a
// usage error (exit 2), commands that only group subcommands get groupRun, and
// every runnable command checks its flags first (checkFlags).
func typeArgs(cmd *cobra.Command) {
	cmd.SuggestionsMinimumDistance = 2
	if cmd.HasSubCommands() && !cmd.Runnable() {
		cmd.Args = cobra.ArbitraryArgs
		cmd.RunE = groupRun
	}
	if v := cmd.Args; v != nil {
		cmd.Args = func(c *cobra.Command, args []string) error {
			err := v(c, args)
			if err != nil && exitCodeOf(err) == exitcode.Failure {
				return usageError("%s", err)
			}
			return err
		}
	}
	if cmd.Runnable() {
		pre := cmd.PreRunE
		cmd.PreRunE = func(c *cobra.Command, args []string) error {
			if err := checkFlags(c); err != nil {
				return err
			}
			if pre != nil {
				return pre(c, args)
			}
			return nil
		}
	}
	for _, c := range cmd.Commands() {
		typeArgs(c)
	}
}

// checkFlags runs cobra's own checks of required flags and flag groups before
// cobra does (it runs them after PreRunE and returns plain strings), so that their
// errors are usage errors; --quiet with --verbose gets a message that says what to do.
func checkFlags(c *cobra.Command) error {
	quiet, verbose := c.Flags().Lookup("quiet"), c.Flags().Lookup("verbose")
	if quiet != nil && verbose != nil && quiet.Changed && verbose.Changed {
		return usageError("--quiet and --verbose cannot be used together; give one of them")
	}
	if err := c.ValidateRequiredFlags(); err != nil {
		return usageError("%s", err)
	}
	if err := c.ValidateFlagGroups(); err != nil {
		return usageError("%s", err)
	}
	return nil
}
