package report

import (
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
