package pipeline

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// seqRange is an inclusive run of seqs, From ≤ To.
type seqRange struct{ From, To int }

// maxGapRanges bounds how many gaps a warning lists one by one.
const maxGapRanges = 10

// missingRanges returns the runs of seqs in 1..top that are not in present, in
// order. It sorts present (duplicates allowed) and costs O(n log n) in its length,
// whatever top is.
func missingRanges(present []int, top int) []seqRange {
	slices.Sort(present)
	var out []seqRange
	next := 1 // the lowest seq not yet accounted for
	for _, seq := range present {
		if seq > top {
			break
		}
		if seq > next {
			out = append(out, seqRange{next, seq - 1})
		}
		next = max(next, seq+1)
	}
	if next <= top {
		out = append(out, seqRange{next, top})
	}
	return out
}

// describeGaps renders gaps as "seq 20", "seqs 15–99,999,999 and 20" and so on, at
// most maxGapRanges of them, then a count of the rest; torn names the seq only
// readable in the torn last line (0 for none). It returns "" when there is no gap.
func describeGaps(gaps []seqRange, torn int) string {
	if len(gaps) == 0 {
		return ""
	}
	total := 0
	parts := make([]string, 0, min(len(gaps), maxGapRanges))
	for i, g := range gaps {
		total += g.To - g.From + 1
		if i >= maxGapRanges {
			continue
		}
		text := groupDigits(g.From)
		if g.To > g.From {
			text += "–" + groupDigits(g.To)
		}
		if torn >= g.From && torn <= g.To {
			if g.To > g.From {
				text += fmt.Sprintf(" (seq %d only in the torn last line)", torn)
			} else {
				text += " (only in the torn last line)"
			}
		}
		parts = append(parts, text)
	}
	noun := "seq "
	if total > 1 {
		noun = "seqs "
	}
	text := noun + joinAnd(parts)
	if rest := len(gaps) - maxGapRanges; rest > 0 {
		text += fmt.Sprintf(", and %d more gaps (%s seqs missing in all)", rest, groupDigits(total))
	}
	return text
}

// groupDigits writes n with commas between groups of three digits: 99,999,999.
func groupDigits(n int) string {
	s := strconv.Itoa(n)
	if n < 10000 {
		return s
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// joinAnd joins items as "a", "a and b", "a, b and c".
func joinAnd(items []string) string {
	if len(items) <= 1 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}
