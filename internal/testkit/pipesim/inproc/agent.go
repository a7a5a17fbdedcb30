package inproc

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/replaytool/replay/agent"
	"github.com/replaytool/replay/internal/testkit/pipesim"
	"github.com/replaytool/replay/manifest"
)

// AgentName is the in-process simulated agent's name (its identity in the
// recordings' fingerprints).
const AgentName = "pipesim:simagent"

// simAgent is cmd/simagent as an agent.Agent: for each request it does the
// work of the scenario's unit the request names (pipesim.XAgentUnit and
// XAgentDo). Its calls are counted per replay run, and the kill-th call does
// its part of the work and then kills the session (die).
type simAgent struct {
	s     *pipesim.XScenario
	kill  *pipesim.XKill
	die   func() error
	calls int
	dead  bool
}

func (a *simAgent) Name() string { return AgentName }

// Run does the request's unit of work. The product runs one dispatch at a time
// here (--jobs 1, its default), so the agent keeps no lock.
func (a *simAgent) Run(_ context.Context, req agent.Request) (agent.Response, error) {
	resp := agent.Response{Agent: a.Name()}
	if a.dead {
		// a replay that died runs nothing more
		resp.Status, resp.Reason = manifest.StatusError, "the session was killed"
		return resp, nil
	}
	task := 0
	if req.Task != nil {
		task = *req.Task
	}
	phase, _, _ := strings.Cut(req.Phase, " ")
	c := pipesim.XAgentCall{Role: req.Role, Phase: phase, Task: task, Seq: req.Seq,
		DispatchFile: req.DispatchFile, DispatchDir: req.DispatchDir, WorkDir: req.WorkDir}
	u, at, err := a.s.XAgentUnit(c, time.Now)
	if err != nil {
		resp.Status, resp.Reason = manifest.StatusFailed, "agent exited 1: simagent: "+err.Error()
		return resp, nil
	}
	a.calls++
	if a.kill != nil && a.kill.Call == a.calls {
		_, _ = pipesim.XAgentDo(c, u, at, a.kill)
		a.dead = true
		if err := a.die(); err != nil {
			return resp, fmt.Errorf("simagent: killing the session: %w", err)
		}
		resp.Status, resp.Reason = manifest.StatusError, "the session was killed"
		return resp, nil
	}
	summary, err := pipesim.XAgentDo(c, u, at, nil)
	if err != nil {
		resp.Status, resp.Reason = manifest.StatusFailed, "agent exited 1: simagent: "+err.Error()
		return resp, nil
	}
	out := summary + "\n"
	resp.Status = manifest.StatusCompleted
	resp.Output, resp.OutputChars = []byte(out), len(out)
	resp.Summary = strings.TrimSpace(strings.TrimPrefix(summary, "SUMMARY:"))
	return resp, nil
}
