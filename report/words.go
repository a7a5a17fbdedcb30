package report

import (
	"fmt"
	"time"
)

// TimeLayout is the one layout of a time shown on screen or in a report: UTC,
// to the second, with its zone ("2026-04-07 18:00:00Z"). Files whose format is
// fixed elsewhere (commit messages, JSON, the checkpoint manifest) keep RFC 3339.
const TimeLayout = "2006-01-02 15:04:05Z07:00"

// Time formats t with TimeLayout in UTC; the zero time is "-".
func Time(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(TimeLayout)
}

// Count writes n and the noun in the right number: Count(1, "file") is "1 file",
// Count(2, "file") is "2 files", Count(0, "dispatch") is "0 dispatches". Nouns
// ending in s, x, z, ch or sh take "es"; a consonant and y turn into "ies".
func Count(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	return fmt.Sprintf("%d %s", n, Plural(noun))
}

// Plural returns the plural of an English noun by the regular rules (see Count).
func Plural(noun string) string {
	switch {
	case noun == "":
		return noun
	case hasAnySuffix(noun, "s", "x", "z", "ch", "sh"):
		return noun + "es"
	case len(noun) > 1 && noun[len(noun)-1] == 'y' && !isVowel(noun[len(noun)-2]):
		return noun[:len(noun)-1] + "ies"
	}
	return noun + "s"
}

func hasAnySuffix(s string, suffixes ...string) bool {
	for _, x := range suffixes {
		if len(s) >= len(x) && s[len(s)-len(x):] == x {
			return true
		}
	}
	return false
}

func isVowel(c byte) bool {
	switch c {
	case 'a', 'e', 'i', 'o', 'u':
		return true
	}
	return false
}
