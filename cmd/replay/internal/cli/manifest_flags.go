package cli

import (
	"fmt"
	"strings"

	"github.com/replaytool/replay/internal/textdist"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// tolerateUnknownFlags makes cmd warn about a long flag it does not know and ignore it
// (with its value, when the next word is not a flag) instead of stopping with a usage
// error: a pipeline on a newer Crucible may pass `before`/`after` a flag this replay
// does not have yet, and its bookkeeping must not stop there. Everything else parses
// as before: known flags, their errors, required flags, --help. cmd takes no
// positional arguments.
func tolerateUnknownFlags(f *Factory, cmd *cobra.Command) {
	run := cmd.RunE
	cmd.DisableFlagParsing = true
	cmd.Args = cobra.ArbitraryArgs
	cmd.RunE = func(c *cobra.Command, args []string) error {
		known, ignored := splitUnknownFlags(c, args)
		c.DisableFlagParsing = false
		defer func() { c.DisableFlagParsing = true }()
		if err := c.ParseFlags(known); err != nil {
			return c.FlagErrorFunc()(c, err)
		}
		if help, _ := c.Flags().GetBool("help"); help {
			return c.Help()
		}
		if err := checkFlags(c); err != nil {
			return err
		}
		if rest := c.Flags().Args(); len(rest) > 0 {
			return usageError("unknown argument %q for %q: it takes flags only", rest[0], c.CommandPath())
		}
		warn := baseOf(f)
		warn.Global = globalsOf(c)
		for _, name := range ignored {
			msg := fmt.Sprintf("%s: ignoring unknown flag --%s (a newer Crucible's?)", c.CommandPath(), name)
			if s := closestFlag(c, name); s != "" {
				msg += fmt.Sprintf("; did you mean --%s?", s)
			}
			warn.Warnf("%s", msg)
		}
		return run(c, nil)
	}
}

// splitUnknownFlags returns args without the long flags c does not know (after its
// flag-name normalisation: unique prefixes), and the names of those flags. An unknown
// flag written without "=" takes the next word as its value unless that word is a
// flag itself. Words after "--" are kept as they are.
func splitUnknownFlags(c *cobra.Command, args []string) (known, ignored []string) {
	norm := c.Flags().GetNormalizeFunc()
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(known, args[i:]...), ignored
		}
		if !strings.HasPrefix(a, "--") {
			known = append(known, a)
			continue
		}
		name, _, hasValue := strings.Cut(a[2:], "=")
		if fl := c.Flag(string(norm(c.Flags(), name))); fl != nil {
			known = append(known, a)
			if fl.NoOptDefVal == "" && !hasValue && i+1 < len(args) {
				// Its value, whatever it looks like (--summary "--- done").
				i++
				known = append(known, args[i])
			}
			continue
		}
		if name == "help" || ambiguousPrefix(c, name) {
			known = append(known, a)
			continue
		}
		ignored = append(ignored, name)
		if !hasValue && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			i++
		}
	}
	return known, ignored
}

// ambiguousPrefix reports whether name is the start of more than one flag of c: a
// usage error, as argparse says, rather than an unknown flag to ignore.
func ambiguousPrefix(c *cobra.Command, name string) bool {
	n := 0
	c.Flags().VisitAll(func(fl *pflag.Flag) {
		if name != "" && strings.HasPrefix(fl.Name, name) {
			n++
		}
	})
	return n > 1
}

// closestFlag returns the flag of c (its own and inherited) nearest to name by edit
// distance, when it is close enough to be a misspelling (at most two edits, and fewer
// than half of name's letters); "" otherwise.
func closestFlag(c *cobra.Command, name string) string {
	best, bestDist := "", 3
	visit := func(fl *pflag.Flag) {
		if d := textdist.Distance(name, fl.Name); !fl.Hidden && d < bestDist {
			best, bestDist = fl.Name, d
		}
	}
	c.Flags().VisitAll(visit)
	c.InheritedFlags().VisitAll(visit)
	if best == "" || 2*bestDist >= len(name) {
		return ""
	}
	return best
}
