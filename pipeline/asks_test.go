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
