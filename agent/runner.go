package agent

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/replaytool/replay/manifest"
)

// Runner runs dispatches scroll-first: it looks a dispatch's recording up before
// calling its Agent, reuses a hit without calling anything, and records what a live
// call returned. Live and replayed work take this one path. A Runner is safe for
// concurrent use when its Agent is.
type Runner struct {
	Agent Agent
	// Store holds the recordings; nil runs everything live and records nothing.
	Store *Store
	// Calls, when set, counts the live agent calls made.
	Calls *atomic.Int64
	// ReuseFailures reuses recorded failed and errored responses too. By default a
	// live runner reuses only completed recordings and runs a recorded failure again
	// (replacing its recording); the recorded agent always reuses every recording.
	ReuseFailures bool
}

// Run returns the response for req: the recorded one when there is one to reuse
// (Reused set, no agent called), otherwise the agent's, which is then saved. The
// error is for failures of replay itself; when saving a live response fails, Run
// returns that response together with the error.
func (r *Runner) Run(ctx context.Context, req Request) (Response, error) {
	if r.Agent == nil {
		return Response{}, fmt.Errorf("dispatch %s: no agent to run it with", req.ID())
	}
	if req.Seq < 1 || req.Template == "" {
		return Response{}, fmt.Errorf("dispatch %q: a request needs a seq ≥ 1 and a template name", req.ID())
	}
	key := Key(req.Template, req.Body)
	_, offline := r.Agent.(*recordedAgent)
	if r.Store != nil {
		rec, ok, err := r.Store.Lookup(key)
		if err != nil {
			return Response{}, fmt.Errorf("dispatch %s: %w", req.ID(), err)
		}
		if ok && (rec.Status == manifest.StatusCompleted || r.ReuseFailures || offline) {
			return *rec, nil
		}
	}
	if offline {
		return r.Agent.Run(ctx, req)
	}
	// The fingerprint is taken before the agent runs: the input tree is the tree
	// the agent started from.
	fp, err := FingerprintOf(req, r.Agent.Name())
	if err != nil {
		return Response{}, err
	}
	if r.Calls != nil {
		r.Calls.Add(1)
	}
	resp, err := r.Agent.Run(ctx, req)
	if err != nil {
		return resp, err
	}
	resp.Key, resp.Reused, resp.RecordedBy, resp.Fingerprint = key, false, "", &fp
	if r.Store != nil {
		if err := r.Store.Save(key, req, resp); err != nil {
			return resp, fmt.Errorf("dispatch %s: the agent's response was not recorded: %w", req.ID(), err)
		}
	}
	return resp, nil
}

// recordedAgent never calls anything: it answers from recordings only.
type recordedAgent struct{ store *Store }

func (a *recordedAgent) Name() string { return SpecRecorded }

// Run returns the recording for req, or a failed response saying there is none.
func (a *recordedAgent) Run(_ context.Context, req Request) (Response, error) {
	key := Key(req.Template, req.Body)
	if a.store != nil {
		rec, ok, err := a.store.Lookup(key)
		if err != nil {
			return Response{}, fmt.Errorf("dispatch %s: %w", req.ID(), err)
		}
		if ok {
			return *rec, nil
		}
	}
	return Response{
		Status:  manifest.StatusFailed,
		Summary: "no recorded response",
		Reason:  fmt.Sprintf("no recorded response for %s (key %s)", req.ID(), key[:12]),
		Key:     key,
		Agent:   SpecRecorded,
	}, nil
}
