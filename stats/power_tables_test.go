package stats

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var powerTables = flag.String("power-tables", "", "rewrite the power tables between the markers of this markdown `FILE` (go test ./stats -run PowerTables -power-tables ../docs/ab-statistics.md)")

const (
	powerBegin = "<!-- power-tables:begin -->"
	powerEnd   = "<!-- power-tables:end -->"
)

// TestPowerTables simulates the rule at named effect sizes and, with
// -power-tables FILE, writes the table into FILE. Without the flag it only
// checks the table builds (a small run).
func TestPowerTables(t *testing.T) {
	t.Parallel()
	trials := 40
	if *powerTables != "" {
		trials = 2000
	}
	table := PowerTable(trials)
	require.Contains(t, table, "| 10 |")
	if *powerTables == "" {
		return
	}
	doc, err := os.ReadFile(*powerTables)
	require.NoError(t, err)
	s := string(doc)
	i, j := strings.Index(s, powerBegin), strings.Index(s, powerEnd)
	require.True(t, i >= 0 && j > i, "markers %s and %s in %s", powerBegin, powerEnd, *powerTables)
	out := s[:i+len(powerBegin)] + "\n" + table + s[j:]
	require.NoError(t, os.WriteFile(*powerTables, []byte(out), 0o644))
}

// PowerTable is the markdown table of the rule's verdict rates by simulation.
func PowerTable(trials int) string {
	type effect struct {
		name      string
		base, mut scenario
	}
	ref := scenario{pass: 0.9, median: 100, sigma: 0.25}
	effects := []effect{
		{"A/A (no difference): false ADOPT or REJECT", ref, ref},
		{"pass rate 0.9 -> 0.5: REJECT", ref, scenario{0.5, 100, 0.25}},
		{"pass rate 0.9 -> 0.7: REJECT", ref, scenario{0.7, 100, 0.25}},
		{"duration -20%: ADOPT", ref, scenario{0.9, 80, 0.25}},
		{"duration -50%: ADOPT", ref, scenario{0.9, 50, 0.25}},
		{"pass rate 0.83 -> 0.08 (truly worse): REJECT", scenario{0.83, 100, 0.25}, scenario{0.08, 100, 0.25}},
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Share of %d simulated experiments per cell (seeded; duration log-normal, log-sd 0.25; alpha 0.05). Fixed: N replicas per arm. Sequential: --replicas 3 --until-decided --max-replicas N.\n\n", trials)
	b.WriteString("| Effect | Design |")
	ns := []int{3, 5, 10, 20}
	for _, n := range ns {
		fmt.Fprintf(&b, " %d |", n)
	}
	b.WriteString("\n|---|---|---|---|---|---|\n")
	for k, e := range effects {
		for _, seq := range []bool{false, true} {
			design := "fixed"
			if seq {
				design = "sequential"
			}
			fmt.Fprintf(&b, "| %s | %s |", e.name, design)
			for _, n := range ns {
				first, max := n, n
				if seq {
					first = 3
				}
				got := rates(uint64(100+k), trials, DefaultRule(), e.base, e.mut, first, max)
				want := got[Reject]
				switch {
				case k == 0:
					want = got[Adopt] + got[Reject]
				case strings.HasSuffix(e.name, "ADOPT"):
					want = got[Adopt]
				}
				fmt.Fprintf(&b, " %.3f |", want)
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}
