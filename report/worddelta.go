package report

import (
	"strconv"
	"strings"
)

// WordDelta is a short word diff of two one-line texts: "=" when they are equal
// (spacing aside), else the words that differ between their common first and last
// words, as `-"5 tests" +"6 tests"`; a side with nothing is left out. Each side is
// clipped to max runes. The quoted words are escaped like Go strings, so a value
// from a run's files cannot drive the terminal.
func WordDelta(before, after string, max int) string {
	a, b := strings.Fields(before), strings.Fields(after)
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	removed, added := a[pre:len(a)-suf], b[pre:len(b)-suf]
	if len(removed) == 0 && len(added) == 0 {
		return "="
	}
	var parts []string
	if len(removed) > 0 {
		parts = append(parts, "-"+strconv.Quote(Clip(strings.Join(removed, " "), max)))
	}
	if len(added) > 0 {
		parts = append(parts, "+"+strconv.Quote(Clip(strings.Join(added, " "), max)))
	}
	return strings.Join(parts, " ")
}
