package pipesim

import (
	"fmt"
	"os"
	"time"
)

// XAgentCall is one call of the simulated agent for a re-dispatched work item,
// as `replay --agent` makes it: what replay tells the agent about the item
// (REPLAY_ROLE, REPLAY_PHASE, REPLAY_TASK, REPLAY_SEQ, REPLAY_DISPATCH_FILE,
// REPLAY_DISPATCH_DIR for the binary cmd/simagent; the agent.Request fields in
// process) and the project it works in.
type XAgentCall struct {
	Role, Phase  string
	Task         int // 0: none
	Seq          int
	DispatchFile string
	DispatchDir  string
	WorkDir      string // the project (the agent's working directory)
}

// XKill is the session dying during a re-dispatch: the Call-th agent call of
// the replay run stops after Step-1 steps of its work, tears step Step at Frac
// of its bytes, and kills replay.
type XKill struct {
	Call, Step int
	Frac       float64
}

// XAgentUnit finds the unit of the scenario the call works on and the time its
// commit carries (the dispatch file's header; now when the header has none). An
// agent does what its prompt says: a dispatch file without the unit's
// instructions (torn by a crash) cannot be done, and is an error naming it.
func (s *XScenario) XAgentUnit(c XAgentCall, now func() time.Time) (*XUnit, time.Time, error) {
	body, _ := os.ReadFile(c.DispatchFile)
	u, err := s.XUnitForPrompt(c.Role, c.Phase, c.Task, string(body))
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("%s: %w", c.DispatchFile, err)
	}
	at, ok := XHeaderTime(body)
	if !ok {
		at = now()
	}
	return u, at, nil
}

// XAgentDo does the call's work exactly as the original run's agent did
// (XAgent), its commit dated at, and returns the agent's summary line; with
// kill it does the killed call's part of the work only (the caller then kills
// replay).
func XAgentDo(c XAgentCall, u *XUnit, at time.Time, kill *XKill) (string, error) {
	if kill != nil {
		return "", XAgent(c.WorkDir, c.DispatchDir, u, c.Seq, at, false, 1, kill.Step-1, kill.Frac)
	}
	if err := XAgent(c.WorkDir, c.DispatchDir, u, c.Seq, at, false, 1, -1, 0); err != nil {
		return "", err
	}
	return fmt.Sprintf("SUMMARY: %s done", u.ID), nil
}
