package report

import (
	"strconv"
	"strings"
)

// WordDelta is a short word diff of two one-line texts: "=" when they are equal
// (spacing aside), else the words that differ between their common first and last
// words, as `-"5 tests" +"6 tests"`; a side with nothing is left out. Each side is
// clipped to max runes. The quoted words are escaped like Go strings, so a value
// from a run's files cannot drive the terminal. It is the summary_delta of a
// comparison's JSON; tables show WordChange.
func WordDelta(before, after string, max int) string {
	a, b := strings.Fields(before), strings.Fields(after)
	pre, suf := commonEnds(a, b)
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

// WordChange shows how after differs from before word by word, in the words they
// share around it, as git's --word-diff=plain does: "Task 1 [-PASS: no
// blocking-] {+FAIL: 3+} findings". No word is cut: at most changeContext shared
// words stand on either side ("..." for the others) and each changed run is cut
// after its words that fit in max runes (ClipWords). It is "same" when the two
// are equal (spacing aside). The text is a run's: a table escapes it as it does
// every cell.
func WordChange(before, after string, max int) string {
	a, b := strings.Fields(before), strings.Fields(after)
	pre, suf := commonEnds(a, b)
	removed, added := a[pre:len(a)-suf], b[pre:len(b)-suf]
	if len(removed) == 0 && len(added) == 0 {
		return "same"
	}
	var parts []string
	if pre > changeContext {
		parts = append(parts, "...")
	}
	parts = append(parts, a[max0(pre-changeContext):pre]...)
	if len(removed) > 0 {
		parts = append(parts, "[-"+ClipWords(strings.Join(removed, " "), max)+"-]")
	}
	if len(added) > 0 {
		parts = append(parts, "{+"+ClipWords(strings.Join(added, " "), max)+"+}")
	}
	parts = append(parts, a[len(a)-suf:len(a)-suf+min(suf, changeContext)]...)
	if suf > changeContext {
		parts = append(parts, "...")
	}
	return strings.Join(parts, " ")
}

// changeContext is how many shared words WordChange shows on either side of a
// change.
const changeContext = 4

func max0(n int) int { return max(n, 0) }

// commonEnds counts the words a and b share at their start and, after those, at
// their end.
func commonEnds(a, b []string) (pre, suf int) {
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	return pre, suf
}
