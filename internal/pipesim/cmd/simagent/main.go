// Command simagent is the simulated agent of the end-to-end crash simulator
// (pipesim.XRunSeed): `replay --agent` runs it for each re-dispatched work
// item. It reads the item from replay's environment (REPLAY_ROLE,
// REPLAY_PHASE, REPLAY_TASK, REPLAY_SEQ, REPLAY_DISPATCH_FILE,
// REPLAY_DISPATCH_DIR) and the scenario from $SIMAGENT_CTL/scenario.json, and
// does the unit's work exactly as the original run's agent did
// (pipesim.XAgent), its commit dated at the dispatch file's header.
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

	"github.com/replaytool/replay/internal/pipesim"
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
	body, _ := os.ReadFile(os.Getenv("REPLAY_DISPATCH_FILE"))
	u, err := s.XUnitForPrompt(os.Getenv("REPLAY_ROLE"), phase, task, string(body))
	if err != nil {
		return fmt.Errorf("%s: %w", os.Getenv("REPLAY_DISPATCH_FILE"), err)
	}
	seq, err := strconv.Atoi(os.Getenv("REPLAY_SEQ"))
	if err != nil {
		return fmt.Errorf("REPLAY_SEQ %q: %v", os.Getenv("REPLAY_SEQ"), err)
	}
	dd := os.Getenv("REPLAY_DISPATCH_DIR")
	at := time.Now()
	if data, err := os.ReadFile(os.Getenv("REPLAY_DISPATCH_FILE")); err == nil {
		if t, ok := pipesim.XHeaderTime(data); ok {
			at = t
		}
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
		var j, step int
		var frac float64
		if _, err := fmt.Sscanf(string(data), "%d %d %g", &j, &step, &frac); err == nil && j == call {
			_ = pipesim.XAgent(".", dd, u, seq, at, false, 1, step-1, frac)
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
	if err := pipesim.XAgent(".", dd, u, seq, at, false, 1, -1, 0); err != nil {
		return err
	}
	fmt.Printf("SUMMARY: %s done\n", u.ID)
	return nil
}
