package exitcode

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestOf(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, OK},
		{"plain", errors.New("boom"), Failure},
		{"usage", fmt.Errorf("flag: %w", ErrUsage), Usage},
		{"refused wrapped twice", fmt.Errorf("a: %w", Wrap(ErrRefused, "branch mismatch")), Refused},
		{"nothing", Wrap(ErrNothingToResume, "Manifest not found. Cannot resume."), NoResume},
		{"coded", &Error{Code: 7, Err: errors.New("x")}, 7},
		{"interrupted", fmt.Errorf("asking: %w", ErrInterrupted), Interrupted},
		{"cancelled run", fmt.Errorf("re-dispatch seq 4: %w", context.Canceled), Interrupted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Of(tt.err))
		})
	}
	assert.Equal(t, "branch mismatch", Wrap(ErrRefused, "branch mismatch").Error())
}
