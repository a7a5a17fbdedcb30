package redispatch

import (
	"fmt"

	"github.com/replaytool/replay/agent"
	"github.com/replaytool/replay/checkpoint"
	"github.com/replaytool/replay/internal/errkind"
	"github.com/replaytool/replay/resume"
)

// ResumeRequest is a resume as the user asked for it, with the steps the caller
// owns (loading with its flags, the preflight display, the agent loop with its
// signals and progress display) passed in as functions.
type ResumeRequest struct {
	// Agent re-dispatches the work after the restore; nil hands off instead.
	Agent agent.Agent
	// Decide loads the pipeline and decides where it resumes.
	Decide func() (*resume.Analysis, error)
	// Preflight checks the run before anything is written; an error stops it.
	Preflight func(a *resume.Analysis) error
	// Restore are the options of the restore (resume.Run).
	Restore resume.RunOptions
	// FileProgress, when set, counts the files a checkpoint restore walks.
	FileProgress checkpoint.FileProgress
	// Redispatch runs the work through ag, recordings in store first.
	Redispatch func(a *resume.Analysis, ag agent.Agent, store *agent.Store, o Options) (*Report, error)
	// Warn receives warnings; nil is silent.
	Warn func(string)
}

// ResumeResult is what a resume did.
type ResumeResult struct {
	Analysis *resume.Analysis
	// Restore is nil when the decision holds no work item (nothing to resume).
	Restore *resume.Result
	// Report is nil when the work was handed off (no agent) or the pipeline
	// started fresh.
	Report *Report
}

// Resume carries out a resume: under the project's replay lock it decides (again,
// when another replay held the lock), warns, runs the preflight, restores behind
// the branch guard and a safety checkpoint (resume.Run), and re-dispatches the
// work from the resume point when an agent is given.
func Resume(r ResumeRequest) (*ResumeResult, error) {
	a, err := r.Decide()
	if err != nil {
		return nil, err
	}
	lock, err := checkpoint.LockProject(a.Pipeline.ShadowDir)
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	if lock != nil && lock.Waited {
		// Another replay ran while this one waited: decide on what it left.
		if a, err = r.Decide(); err != nil {
			return nil, err
		}
	}
	pl := a.Pipeline
	// An agent of a replay that died may still be writing into the project:
	// never restore or dispatch under it.
	if live := agent.LiveAgents(pl.DispatchDir, true); len(live) > 0 {
		return nil, errkind.New(checkpoint.ErrRefused, agent.LiveAgentsError(live))
	}
	for _, w := range resume.Warnings(a) {
		say(r.Warn, w)
	}
	for _, line := range resume.FailureLines(a) {
		say(r.Warn, "verification failed: "+line)
	}
	if err := r.Preflight(a); err != nil {
		return nil, err
	}
	res := &ResumeResult{Analysis: a}
	if len(a.Items) == 0 {
		// The decision holds no work item: nothing to restore or re-dispatch.
		return res, nil
	}
	if pl.Store != nil && r.FileProgress != nil {
		pl.Store.SetFileProgress(r.FileProgress)
	}
	if res.Restore, err = resume.Run(a, r.Restore); err != nil {
		return nil, err
	}
	if res.Restore.StartedFresh {
		return res, nil
	}
	for _, w := range res.Restore.State.Warnings {
		say(r.Warn, w)
	}
	if r.Agent == nil {
		return res, nil
	}
	res.Report, err = r.Redispatch(a, r.Agent, agent.OpenStore(pl.DispatchDir), Options{Session: res.Restore.Session, WorkDir: pl.ProjectDir, Resume: true})
	return res, err
}

func say(to func(string), msg string) {
	if to != nil {
		to(msg)
	}
}

// Stopped returns the error of a re-dispatch a failed dispatch stopped; nil when
// the report ran to its end (or there is none).
func (r *ResumeResult) Stopped() error {
	if r.Report == nil || r.Report.Stopped == "" {
		return nil
	}
	return fmt.Errorf("re-dispatch stopped: %s; fix the cause and run replay again to resume from there", r.Report.Stopped)
}
