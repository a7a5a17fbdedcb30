package agent

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/replaytool/replay/internal/platform"
	"github.com/replaytool/replay/internal/runfile"
	"github.com/replaytool/replay/internal/safewrite"
)

// AgentRecord is what replay keeps beside a running command agent's stderr log
// (<dispatchDir>/agent-logs/<seq>-<template>.pid) while it runs: the replay
// process and the agent's process group. A record left behind names an agent
// of a replay that died; LiveAgents finds the ones still running.
type AgentRecord struct {
	ReplayPID  int    `json:"replay_pid"`
	AgentGroup int    `json:"agent_pgid"`
	Seq        int    `json:"seq"`
	Session    string `json:"session,omitempty"`
	// Tied says the agent's group was tied to the replay's life when it
	// started (platform.ParentDeathSignal: the kernel signals its leader when
	// the replay dies, and the leader kills the group), so a group of a dead
	// replay is ending on its own; WaitLiveAgents gives it a moment.
	Tied bool `json:"tied,omitempty"`
	// Path is the record's file (not stored in it).
	Path string `json:"-"`
}

// agentRecordPath is where the record of req's agent is kept.
func agentRecordPath(req Request) string {
	return strings.TrimSuffix(StderrLogPath(req), ".stderr.log") + ".pid"
}

// writeAgentRecord records the agent of req, group pgid, through the dispatch
// dir as a root (a planted link is refused, never written through); "" when it
// could not be written (the agent runs all the same).
func writeAgentRecord(req Request, pgid int) string {
	path := agentRecordPath(req)
	rel, err := filepath.Rel(req.DispatchDir, path)
	if err != nil {
		return ""
	}
	data, _ := json.Marshal(AgentRecord{ReplayPID: os.Getpid(), AgentGroup: pgid, Seq: req.Seq, Session: req.Session, Tied: platform.ParentDeathSignal})
	f, err := safewrite.OpenInRoot(req.DispatchDir, rel, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return ""
	}
	defer f.Close()
	if _, err := f.Write(append(data, '\n')); err != nil {
		return ""
	}
	return path
}

func removeAgentRecord(root, path string) {
	if path == "" {
		return
	}
	if rel, err := filepath.Rel(root, path); err == nil {
		_ = safewrite.RemoveIn(root, rel)
	}
}

// LiveAgents returns the agents recorded in dispatchDir whose replay process is
// gone while their process group still runs: agents of a replay that died,
// which may still write into the project. A record whose agent is gone too is
// removed when prune is set (a resume; a plan reads only). Records are read as
// untrusted files: one that cannot be parsed is skipped.
func LiveAgents(dispatchDir string, prune bool) []AgentRecord {
	paths, _ := filepath.Glob(filepath.Join(dispatchDir, AgentLogsDir, "*.pid"))
	var out []AgentRecord
	for _, p := range paths {
		data, err := runfile.ReadFile(p, runfile.Marker)
		if err != nil {
			continue
		}
		var r AgentRecord
		if json.Unmarshal(data, &r) != nil || r.AgentGroup <= 0 || r.ReplayPID <= 0 {
			continue
		}
		r.Path = p
		switch {
		case r.ReplayPID == os.Getpid():
		case platform.ProcessAlive(r.ReplayPID) && platform.GroupAlive(r.AgentGroup):
			// Its replay still runs (and holds the project's lock): not a dead run's.
		case platform.GroupAlive(r.AgentGroup):
			out = append(out, r)
		case prune:
			removeAgentRecord(dispatchDir, p)
		}
	}
	return out
}

// TiedAgentGrace bounds how long WaitLiveAgents waits for the tied agents of
// a dead replay to end: the kernel's signal and the group's own kill take a
// moment, seconds on a loaded machine (a resume started right after a kill
// saw them still running at a load average of 35).
const TiedAgentGrace = 10 * time.Second

// WaitLiveAgents is LiveAgents (pruning) for a resume about to write: while
// every agent of a dead replay it finds was tied to that replay's life, it
// waits for them to end, telling wait once, for at most grace; it returns the
// agents still running then. An agent not tied (a record of another
// platform, or one replay did not write) is returned at once: nothing says it
// will end.
func WaitLiveAgents(dispatchDir string, grace time.Duration, wait func([]AgentRecord)) []AgentRecord {
	live := LiveAgents(dispatchDir, true)
	told := false
	for end := time.Now().Add(grace); len(live) > 0 && allTied(live) && time.Now().Before(end); live = LiveAgents(dispatchDir, true) {
		if !told && wait != nil {
			wait(live)
			told = true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return live
}

func allTied(rs []AgentRecord) bool {
	for _, r := range rs {
		if !r.Tied {
			return false
		}
	}
	return true
}

// LiveAgentsError is the refusal of a resume while agents of a dead run live.
func LiveAgentsError(rs []AgentRecord) string {
	var parts []string
	for _, r := range rs {
		parts = append(parts, fmt.Sprintf("seq %d, process group %d (recorded in %s)", r.Seq, r.AgentGroup, r.Path))
	}
	return fmt.Sprintf("an agent started by a replay that is gone is still running (%s): it may still change the project; wait for it or stop it (kill -TERM -<group>), then run replay again; nothing was changed", strings.Join(parts, "; "))
}
