package replicate

import (
	"fmt"

	"github.com/replaytool/replay/redispatch"
)

// ReplicaRun names one replica for a progress display: replica Index of Of in its
// arm, and its session.
type ReplicaRun struct {
	Arm       string
	Index, Of int
	Session   string
}

// Label is "baseline replica 2/4 (session S)".
func (r ReplicaRun) Label() string {
	return fmt.Sprintf("%s replica %d/%d (session %s)", r.Arm, r.Index, r.Of, r.Session)
}

// Progress is told the life of each replica: when its agents start, each dispatch
// it runs, and when it is done, with its outcome in a few words (its dispatches, its
// failures, a stop, the check's exit status). Calls come from several goroutines.
// Nothing is reported before a replica runs.
type Progress interface {
	ReplicaStarted(r ReplicaRun)
	ReplicaDispatch(r ReplicaRun, d redispatch.DispatchProgress)
	ReplicaFinished(r ReplicaRun, outcome string)
}

// replicaOutcome says in a few words how a replica's replay ended.
func replicaOutcome(rep *redispatch.Report, checkExit *int) string {
	s := fmt.Sprintf("%d dispatches", len(rep.Outcomes))
	if rep.Failed > 0 {
		s += fmt.Sprintf(", %d failed", rep.Failed)
	}
	if rep.Stopped != "" {
		s += ", stopped: " + rep.Stopped
	}
	if checkExit != nil {
		s += fmt.Sprintf(", check exit %d", *checkExit)
	}
	return s
}

// dispatchForwarder passes a replica's dispatches to its Progress.
type dispatchForwarder struct {
	p   Progress
	run ReplicaRun
}

func (f dispatchForwarder) DispatchStarted(d redispatch.DispatchProgress) {
	f.p.ReplicaDispatch(f.run, d)
}

func (f dispatchForwarder) DispatchFinished(redispatch.DispatchProgress, string) {}
