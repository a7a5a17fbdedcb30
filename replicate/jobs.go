package replicate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"sync"

	"github.com/replaytool/replay/ab"
	"github.com/replaytool/replay/agent"
	"github.com/replaytool/replay/redispatch"
	"github.com/replaytool/replay/resume"
)

// job is one replica to run: replica index of of in its arm.
type job struct {
	arm       string
	index, of int
}

// maxCheckOutput is how much of a check's combined output a replica keeps (its end).
const maxCheckOutput = 4096

// runJobs runs the replicas of jobs, at most r.Jobs at once. Their setup (loading
// the run, choosing the session, preparing the worktree) happens one after the
// other in the order of jobs, and every setup is done before any agent starts: a
// replica's analysis then never sees another replica's dispatches in flight, and
// sessions are given out the same way at any --jobs. The agents' work and the
// checks overlap.
func runJobs(r Request, jobs []job, warn *warnings) ([]*Replica, error) {
	out := make([]*Replica, len(jobs))
	errs := make([]error, len(jobs))
	turn := make([]chan struct{}, len(jobs)+1)
	for i := range turn {
		turn[i] = make(chan struct{})
	}
	close(turn[0])
	allSet := turn[len(jobs)]
	sem := make(chan struct{}, r.Jobs)
	top := map[string]int{}
	for _, j := range jobs {
		top[j.arm] = max(top[j.arm], j.index)
	}
	var wg sync.WaitGroup
	for k, j := range jobs {
		j.of = top[j.arm]
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-turn[k]
			var once sync.Once
			done := func() { once.Do(func() { close(turn[k+1]) }) }
			defer done()
			start := func() func() {
				done()
				<-allSet
				sem <- struct{}{}
				return func() { <-sem }
			}
			out[k], errs[k] = runOne(r, j, warn, start)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// runOne runs one replica: an A/B replay of its arm in its own worktree, then the
// check. start is called when its setup is done; it returns once the replica may
// run its agents, with the function that frees its slot.
func runOne(r Request, j job, warn *warnings, start func() func()) (*Replica, error) {
	q := r.AB
	q.Baseline, q.Diff = j.arm == Baseline, false
	q.Warn, q.Info = warn.add, nil
	redo := q.Redispatch
	release := func() {}
	run := ReplicaRun{Arm: j.arm, Index: j.index, Of: j.of}
	q.Redispatch = func(a *resume.Analysis, ag agent.Agent, store *agent.Store, o redispatch.Options) (*redispatch.Report, error) {
		o.Replica = replicaName(j, a, r.Stratum)
		release = start()
		run.Session = o.Session
		if r.Progress != nil {
			r.Progress.ReplicaStarted(run)
			o.Progress = dispatchForwarder{p: r.Progress, run: run}
		}
		return redo(a, ag, store, o)
	}
	defer func() { release() }()
	res, err := ab.Run(q)
	if err != nil {
		if r.Progress != nil && run.Session != "" {
			r.Progress.ReplicaFinished(run, "error: "+err.Error())
		}
		return nil, fmt.Errorf("%s replica %d: %w", j.arm, j.index, err)
	}
	if res.Worktree == nil {
		return nil, errkindNothing("%s replica %d: nothing to replay: no dispatch from the replay point on uses a mutated template", j.arm, j.index)
	}
	rep := &Replica{Arm: j.arm, Index: j.index, Session: res.Worktree.Session, Worktree: res.Worktree.Dir, Stopped: stoppedText(res.Report),
		mutations: res.Mutations}
	rep.Dispatches = dispatchMetrics(res.Report, res.Analysis.Pipeline.DispatchDir)
	if r.Check != "" {
		code, tail, err := runCheck(r.Ctx, r.Check, rep.Worktree, r.Env)
		if err != nil {
			return nil, fmt.Errorf("%s replica %d: --check %q in %s: %w", j.arm, j.index, r.Check, rep.Worktree, err)
		}
		rep.CheckExit, rep.CheckOutput = &code, tail
	}
	if r.Progress != nil {
		r.Progress.ReplicaFinished(run, replicaOutcome(res.Report, rep.CheckExit))
	}
	return rep, nil
}

// replicaName names a replica to its agent: its arm and index, and the pipeline
// it replays (the original run's session and its project directory's name, not
// its path, so a copy of the project elsewhere draws the same). A seeded
// simulated agent draws from it, so the same replica of two pipelines of a
// corpus is two independent draws.
func replicaName(j job, a *resume.Analysis, stratum string) string {
	name := fmt.Sprintf("%s %d", j.arm, j.index)
	if a == nil || a.Pipeline == nil {
		return name
	}
	id := stratum
	if id == "" {
		id = filepath.Base(a.Pipeline.ProjectDir)
	}
	if loc := a.Pipeline.Location; loc != nil && loc.SessionID != "" {
		id = loc.SessionID + " " + id
	}
	return name + " of " + id
}

// runCheck runs check with sh -c in dir; it returns the exit status and the end of
// the combined output. An error is a check that could not be started.
func runCheck(ctx context.Context, check, dir string, env []string) (int, string, error) {
	cmd := exec.CommandContext(ctx, "sh", "-c", check)
	cmd.Dir, cmd.Env = dir, env
	var buf tailBuffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, buf.String(), nil
	case errors.As(err, &exit) && ctx.Err() == nil:
		return exit.ExitCode(), buf.String(), nil
	case ctx.Err() != nil:
		return 0, "", ctx.Err()
	}
	return 0, "", err
}

// tailBuffer keeps the last maxCheckOutput bytes written to it.
type tailBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > maxCheckOutput {
		t.b = bytes.Clone(t.b[len(t.b)-maxCheckOutput:])
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
