package resume

import (
	"time"

	"github.com/replaytool/replay/pipeline"
)

// Decide is DecideFor with no dispatch that must be re-executed.
func Decide(pl *pipeline.Pipeline, fromPhase string, fromSeq int, now time.Time) (*Analysis, error) {
	return DecideFor(pl, fromPhase, fromSeq, now, nil)
}
