package pipeline

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestAsksOfReadsWhatADispatchFileAsksFor(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]Ask{
		"Check that each finding is resolved. Answer with a verdict per finding.": AskNothing,
		"Did any finding persist across rounds? Answer yes or no.":                AskNothing,
		"Write your report to 7-auditor-output.md beside this file.":              AskFile,
		"Save the findings to findings.json in the scratch directory.":            AskFile,
		"Fix the findings, run the tests and commit your changes.":                AskCommit,
		"Implement the task with TDD; git commit when green.":                     AskCommit,
	} {
		assert.Equal(t, want, AsksOf([]byte(body)), body)
	}
}

// FuzzAsksOf: any dispatch body is classified without a panic, and a body that
// asks for a commit is never taken as asking for nothing.
func FuzzAsksOf(f *testing.F) {
	f.Add([]byte("Answer with a verdict per finding."))
	f.Add([]byte("Fix the findings and commit your changes."))
	f.Add([]byte("Write your report to 3-auditor-output.md."))
	f.Fuzz(func(t *testing.T, body []byte) {
		got := AsksOf(body)
		if asksCommit.Match(body) && got != AskCommit {
			t.Fatalf("%q asks for a commit, classified %d", body, got)
		}
	})
}

// FuzzParseStart: a marker's start_time never panics the parser, and a zoned
// value is read as zoned.
func FuzzParseStart(f *testing.F) {
	f.Add("2026-04-07T09:00:00+02:00")
	f.Add("2026-04-07 09:00:00")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		if tm, zoned, ok := parseStart(s); ok && zoned && tm.IsZero() {
			t.Fatalf("%q: zoned but zero", s)
		}
	})
}
