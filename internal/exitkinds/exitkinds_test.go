package exitkinds

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/replaytool/replay/checkpoint"
	"github.com/replaytool/replay/internal/exitcode"
	"github.com/replaytool/replay/manifest"
	"github.com/replaytool/replay/resume"
	"github.com/stretchr/testify/assert"
)

func TestOf(t *testing.T) {
	t.Parallel()
	own := errors.New("own usage kind")
	for _, c := range []struct {
		err  error
		want int
	}{
		{nil, exitcode.OK},
		{errors.New("anything else"), exitcode.Failure},
		{fmt.Errorf("wrapped: %w", checkpoint.ErrRefused), exitcode.Refused},
		{fmt.Errorf("plan: %w", resume.ErrBadSeq), exitcode.Usage},
		{manifest.ErrNoManifest, exitcode.NoResume},
		{fmt.Errorf("stopped: %w", context.Canceled), exitcode.Interrupted},
		{fmt.Errorf("%w", own), exitcode.Usage},
		// The caller's own kinds are looked at first.
		{errors.Join(own, checkpoint.ErrRefused), exitcode.Usage},
	} {
		assert.Equal(t, c.want, Of(c.err, Kind{Err: own, Code: exitcode.Usage}), "%v", c.err)
	}
	assert.Equal(t, exitcode.Refused, Of(errors.Join(own, checkpoint.ErrRefused)), "without own kinds, the table decides")
}
