package cli

import (
	"fmt"
	"strings"

	"github.com/replaytool/replay/internal/fixture"
	"github.com/replaytool/replay/manifest"
)

// demoSteps is how many steps the demo shows: five, the time travel, the replicated run.
const demoSteps = 5 + demoTimeTravelSteps + 1

// demoHeading prints the heading of step n so that it stands apart from the sections
// the step's own command prints: a full-width rule on a terminal, a rule and a
// "Step n of N" heading in markdown.
func demoHeading(f *runEnv, n int, title string) {
	out := f.IO.Out
	style := f.TableStyle()
	if !style.Text {
		if !f.Global.Verbose {
			fmt.Fprintf(out, "\n## Step %d of %d: %s\n\n", n, demoSteps, title)
			return
		}
		fmt.Fprintf(out, "\n---\n\n## Step %d of %d: %s\n\n", n, demoSteps, title)
		return
	}
	head := fmt.Sprintf("==== Step %d of %d: %s ", n, demoSteps, title)
	width := style.Width
	if width <= 0 || width > 100 {
		width = 100
	}
	lead := "\n\n"
	if !f.Global.Verbose {
		lead = "\n"
	}
	fmt.Fprintf(out, "%s%s%s\n\n", lead, head, strings.Repeat("=", max(4, width-len([]rune(head)))))
}

// lastABSession returns the session of the newest A/B replay recorded in the
// manifest at path (its entries carry a mutation), "" when there is none.
func lastABSession(path string) string {
	m, err := manifest.Read(path)
	if err != nil || m == nil {
		return ""
	}
	session, top := "", -1
	for _, e := range m.Entries {
		if e.Mutation != nil && e.ReplaySession != nil && e.Seq > top {
			session, top = *e.ReplaySession, e.Seq
		}
	}
	return session
}

// writeLookFurther prints commands to look further at the kept example. Each one
// carries the example's environment for itself (HOME=... replay ...), so that
// copying them never re-homes the user's shell; the diff names the A/B session the
// demo showed, not a replica of the replicated run that came after it.
func writeLookFurther(f *runEnv, p *fixture.Pipeline, self, abSession, now string) {
	q := func(s string) string { return quoteArgs([]string{s})[0] }
	env := fmt.Sprintf("HOME=%s TMPDIR=%s %s=%s", q(p.Home), q(p.Tmp), SystemTmpEnv, q(p.SysTmp))
	run := func(args ...string) string {
		return fmt.Sprintf("  %s %s %s\n", env, self, strings.Join(args, " "))
	}
	out := f.IO.Out
	fmt.Fprintf(out, "\n## Look further\n\n")
	fmt.Fprintf(out, "  cd %s\n", q(p.Project))
	fmt.Fprint(out, run("checkpoint", "list"))
	fmt.Fprint(out, run("plan", q(p.Scratch), "--json"))
	diff := []string{"diff", q(p.Scratch)}
	if abSession != "" {
		diff = append(diff, "--session", q(abSession))
	}
	fmt.Fprint(out, run(append(diff, "--now", now)...))
	fmt.Fprint(out, run("lineage", q(p.Scratch)))
	fmt.Fprintf(out, "  git -C %s log --oneline --all\n", q(p.Project))
	fmt.Fprintf(out, "\nEach command carries the example's environment: your shell's HOME stays as it is.\n")
	fmt.Fprintf(out, "The example is kept in %s. To go on inside Claude Code, see docs/claude-code.md.\n", p.Root)
}
