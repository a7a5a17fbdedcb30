// Command simagent is the simulated agent of the end-to-end crash simulator
// (pipesim.XRunSeed): `replay --agent` runs it for each re-dispatched work
// item. It reads the item from replay's environment (REPLAY_ROLE,
// REPLAY_PHASE, REPLAY_TASK, REPLAY_SEQ, REPLAY_DISPATCH_FILE,
// REPLAY_DISPATCH_DIR) and the scenario from $SIMAGENT_CTL/scenario.json, and
// does the unit's work exactly as the original run's agent did
// (pipesim.XAgentUnit and XAgentDo, which the in-process agent of
// internal/testkit/pipesim/inproc calls too), its commit dated at the dispatch file's
// header.
//
// $SIMAGENT_CTL/kill ("J STEP FRAC") makes the J-th call of the run stop after
// STEP-1 steps, tear step STEP at FRAC, and kill the replay process whose pid
// is in $SIMAGENT_CTL/replay.pid: the session dying during a re-dispatch.
package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/replaytool/replay/internal/testkit/pipesim"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "simagent:", err)
		os.Exit(1)
	}
}

func run() error {
	_, _ = io.Copy(io.Discard, os.Stdin)
	ctl := os.Getenv("SIMAGENT_CTL")
	s, err := pipesim.ReadScenario(filepath.Join(ctl, "scenario.json"))
	if err != nil {
		return err
	}
	phase, _, _ := strings.Cut(os.Getenv("REPLAY_PHASE"), " ")
	task, _ := strconv.Atoi(strings.TrimPrefix(os.Getenv("REPLAY_TASK"), "t"))
	c := pipesim.XAgentCall{Role: os.Getenv("REPLAY_ROLE"), Phase: phase, Task: task,
		DispatchFile: os.Getenv("REPLAY_DISPATCH_FILE"), DispatchDir: os.Getenv("REPLAY_DISPATCH_DIR"), WorkDir: "."}
	u, at, err := s.XAgentUnit(c, time.Now)
	if err != nil {
		return err
	}
	if c.Seq, err = strconv.Atoi(os.Getenv("REPLAY_SEQ")); err != nil {
		return fmt.Errorf("REPLAY_SEQ %q: %v", os.Getenv("REPLAY_SEQ"), err)
	}
	// claim this call's number
	call := 1
	for ; ; call++ {
		f, err := os.OpenFile(filepath.Join(ctl, fmt.Sprintf("call-%d", call)), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err == nil {
			f.Close()
			break
		}
		if !os.IsExist(err) {
			return err
		}
	}
	if data, err := os.ReadFile(filepath.Join(ctl, "kill")); err == nil {
		var k pipesim.XKill
		if _, err := fmt.Sscanf(string(data), "%d %d %g", &k.Call, &k.Step, &k.Frac); err == nil && k.Call == call {
			_, _ = pipesim.XAgentDo(c, u, at, &k)
			for i := 0; i < 100; i++ {
				if data, err := os.ReadFile(filepath.Join(ctl, "replay.pid")); err == nil {
					if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && pid > 0 {
						if p, err := os.FindProcess(pid); err == nil {
							_ = p.Kill()
						}
						break
					}
				}
				time.Sleep(10 * time.Millisecond)
			}
			os.Exit(137)
		}
	}
	summary, err := pipesim.XAgentDo(c, u, at, nil)
	if err != nil {
		return err
	}
	fmt.Println(summary)
	return nil
}
