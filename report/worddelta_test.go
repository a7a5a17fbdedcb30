package report

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestWordDelta(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, before, after, want string
	}{
		{"equal", "Task 1 done, 5 tests", "Task 1 done, 5 tests", "="},
		{"equal but spacing", "Task 1  done", " Task 1 done ", "="},
		{"one word", "Task 1 done, 5 tests", "Task 1 done, 6 tests", `-"5" +"6"`},
		{"middle", "Task 1 PASS: no blocking findings", "Task 1 FAIL: 2 blocking findings", `-"PASS: no" +"FAIL: 2"`},
		{"added only", "Task 1 done", "Task 1 done, 5 tests", `-"done" +"done, 5 tests"`},
		{"appended word", "Task 1 done", "Task 1 done again", `+"again"`},
		{"removed word", "Task 1 done again", "Task 1 done", `-"again"`},
		{"from empty", "", "Plan approved", `+"Plan approved"`},
		{"escaped", "ok", "ok \x1b[31m", `+"\x1b[31m"`},
		{"clipped", "a", "a b c d e f g h i j k l m n o p q r s t u v w x y z", `+"b c d e f g h i j k l m n o p q r s t..."`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, WordDelta(tt.before, tt.after, 40))
		})
	}
}

// WordChange keeps the words around the change and never cuts one (issue 39: not
// -"PASS: no blocking" +"FAIL: 3" with the shared start and end gone).
func TestWordChange(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, before, after, want string
	}{
		{"equal", "Task 1 done, 5 tests", "Task 1  done, 5 tests ", "same"},
		{"middle", "Task 1 PASS: no blocking findings", "Task 1 FAIL: 3 findings", "Task 1 [-PASS: no blocking-] {+FAIL: 3+} findings"},
		{"one word", "Task 1 done, 5 tests", "Task 1 done, 6 tests", "Task 1 done, [-5-] {+6+} tests"},
		{"appended", "Task 1 done", "Task 1 done again", "Task 1 done {+again+}"},
		{"removed", "Task 1 done again", "Task 1 done", "Task 1 done [-again-]"},
		{"from empty", "", "Plan approved", "{+Plan approved+}"},
		{"to empty", "Plan approved", "", "[-Plan approved-]"},
		{"nothing shared", "a b", "c d", "[-a b-] {+c d+}"},
		{"long change, cut after a word", "a " + strings.Repeat("xx ", 40) + "z", "a " + strings.Repeat("yy ", 40) + "z",
			"a [-" + strings.Repeat("xx ", 13) + "...-] {+" + strings.Repeat("yy ", 13) + "...+} z"},
		{"long context", "one two three four five six PASS seven eight nine ten eleven", "one two three four five six FAIL seven eight nine ten eleven",
			"... three four five six [-PASS-] {+FAIL+} seven eight nine ten ..."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, WordChange(tt.before, tt.after, 40))
		})
	}
}
