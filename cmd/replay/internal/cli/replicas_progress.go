package cli

import (
	"time"

	"github.com/replaytool/replay/cmd/replay/internal/ui"
	"github.com/replaytool/replay/replicate"
)

// replicaProgress returns how a replicated run shows its replicas on stderr: a live
// board on a terminal, one line per finished replica off it, nothing with --quiet.
// Call stop when the replicas are done. Elapsed times are the screen's own (the wall
// clock); they are never written to a file.
func replicaProgress(f *runEnv) (p replicate.Progress, stop func()) {
	switch {
	case !f.Printer().ShowProgress():
		return nil, func() {}
	case f.IO.IsStderrTTY():
		board := ui.NewReplicaBoard(f.IO.ErrOut, time.Now)
		board.Start()
		return board, board.Stop
	}
	return &ui.ReplicaLines{W: f.Printer().ProgressWriter(), Now: time.Now}, func() {}
}
