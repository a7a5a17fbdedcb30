package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/replaytool/replay/internal/errkind"
	"github.com/replaytool/replay/manifest"
)

// Reuse says when a recording may stand in for a live dispatch.
type Reuse string

// The reuse modes: exact needs the whole fingerprint to match, template ignores the
// input tree, never always runs live.
const (
	ReuseExact    Reuse = "exact"
	ReuseTemplate Reuse = "template"
	ReuseNever    Reuse = "never"
)

// ParseReuse returns the reuse mode named s ("" is exact).
func ParseReuse(s string) (Reuse, error) {
	switch Reuse(s) {
	case "", ReuseExact:
		return ReuseExact, nil
	case ReuseTemplate, ReuseNever:
		return Reuse(s), nil
	}
	return "", fmt.Errorf("--reuse %q: give exact, template or never", s)
}

// ErrStale is the kind of error for a recording whose fingerprint no longer
// matches the dispatch it would stand in for, when no live agent may run instead.
var ErrStale = errors.New("stale recording")

// Runner runs dispatches scroll-first: it looks a dispatch's recording up before
// calling its Agent, reuses a hit without calling anything (re-applying the
// recorded side effects), and records what a live call returned, with its
// fingerprint and side effects. A Runner is safe for concurrent use when its Agent is.
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
	// Reuse is the reuse mode; "" is exact. A recording whose fingerprint does not
	// match is stale: a live runner runs the dispatch again, the recorded agent
	// fails closed (ErrStale).
	Reuse Reuse
	// Serve, when set, is asked before a recording stands in for a dispatch:
	// "" lets it, anything else is why the dispatch runs live instead (a
	// resume's rule: a recording must prove it reproduces the work). Under the
	// recorded agent a refusal is an error (ErrStale): nothing runs live there.
	Serve func(req Request, rec *Response) string
	// Guard, when set, is asked before every live agent call, with why no
	// recording served the dispatch; an error stops the dispatch before the agent
	// runs (an external role during a replay).
	Guard func(req Request, why string) error

	// repos keeps the worktree repositories a recorded replay opened, so their
	// object caches serve the dispatches that follow; nil opens each time.
	repos *repoCache
}

// NewRunner returns a Runner of agent with store that keeps the repositories it
// opens to re-apply recordings open between dispatches (their objects stay
// cached); the other fields are set by the caller.
func NewRunner(agent Agent, store *Store) *Runner {
	return &Runner{Agent: agent, Store: store, repos: &repoCache{}}
}

// Run returns the response for req: the recorded one when there is one to reuse
// (Reused set, no agent called, side effects re-applied), otherwise the agent's,
// which is then saved with LiveReason saying why no recording served it. The error
// is for failures of replay itself, for stale recordings under the recorded agent
// and for a live call Guard refused; when saving a live response fails, Run
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
	why, rec, err := r.lookup(req, key, offline)
	if err != nil {
		return Response{}, err
	}
	if rec != nil {
		return *rec, nil
	}
	if offline {
		return r.Agent.Run(ctx, req)
	}
	if r.Guard != nil {
		if err := r.Guard(req, why); err != nil {
			return Response{}, err
		}
	}
	resp, err := r.live(ctx, req, key)
	resp.LiveReason = why
	return resp, err
}

// lookup returns the recording that serves req (its side effects re-applied), or
// why none does.
func (r *Runner) lookup(req Request, key string, offline bool) (string, *Response, error) {
	switch {
	case r.Store == nil:
		return "no recordings kept", nil, nil
	case r.Reuse == ReuseNever:
		return "--reuse never", nil, nil
	}
	rec, ok, err := r.Store.Lookup(key)
	switch {
	case err != nil:
		return "", nil, fmt.Errorf("dispatch %s: %w", req.ID(), err)
	case !ok:
		return "absent: no recording under " + key[:12], nil, nil
	case rec.Status != manifest.StatusCompleted && !r.ReuseFailures && !offline:
		return fmt.Sprintf("recorded as %s: run live again", rec.Status), nil, nil
	}
	if r.Serve != nil {
		if why := r.Serve(req, rec); why != "" {
			if offline {
				return "", nil, errkind.Errorf(ErrStale, "dispatch %s: the recording %s cannot stand in: %s; run it live (a live --agent)", req.ID(), rec.Key[:min(12, len(rec.Key))], why)
			}
			return why, nil, nil
		}
	}
	changed, err := r.reuse(req, rec, offline)
	if err != nil {
		return "", nil, err
	}
	if slices.Contains(changed, FieldWave) {
		return "wave effect: its commits were made beside other dispatches of its wave in one worktree and cannot be told apart", nil, nil
	}
	if len(changed) > 0 {
		return "stale: " + strings.Join(changed, ", ") + " changed", nil, nil
	}
	return "", rec, nil
}

// reuse checks a recording against req and re-applies its side effects; the
// fingerprint fields that changed (none when it was applied) mean it is stale and
// the dispatch runs live.
func (r *Runner) reuse(req Request, rec *Response, offline bool) ([]string, error) {
	defer r.repos.hold(req.WorkDir)()
	var changed []string
	if rec.Fingerprint != nil {
		head, tree, err := readHeadWith(r.repos.open, req.WorkDir)
		if err != nil {
			return nil, fmt.Errorf("dispatch %s: %w", req.ID(), err)
		}
		changed = StaleAt(req, rec, r.Agent.Name(), r.Reuse, offline, head, tree)
	}
	if rec.Effects != nil && rec.Effects.Wave && rec.Effects.HeadAfter != "" {
		if offline {
			return nil, errkind.Errorf(ErrStale, "dispatch %s: the recording %s holds a wave effect: its commits were made while other dispatches of its wave committed in the same worktree and cannot be told apart, so it is never re-applied alone; run the wave live (a live --agent) with --jobs 1 to record each dispatch's own commits",
				req.ID(), rec.Key[:12])
		}
		return []string{FieldWave}, nil
	}
	if len(changed) > 0 {
		if offline {
			return nil, errkind.Errorf(ErrStale, "dispatch %s: the recording %s is stale: %s changed since it was recorded; run it live (--reuse never, or a live --agent) to record it again",
				req.ID(), rec.Key[:12], strings.Join(changed, ", "))
		}
		return changed, nil
	}
	if err := applyEffectsWith(r.repos, req, rec.Effects); err != nil {
		return nil, err
	}
	return nil, nil
}

// StaleAt returns the fingerprint fields in which rec no longer matches req run
// by agentName under mode (the agent is not compared when offline, and a
// recording without a fingerprint is taken as matching; one whose commits are
// already at HEAD matches whatever its input tree was), for a worktree whose HEAD
// would be head with tree tree,
// without reading one: a plan forecasts with it what a replay would reuse.
func StaleAt(req Request, rec *Response, agentName string, mode Reuse, offline bool, head, tree string) []string {
	if rec.Fingerprint == nil {
		return nil
	}
	cur := fingerprintAt(req, agentName, tree)
	ignoreTree := mode == ReuseTemplate ||
		(rec.Effects != nil && rec.Effects.HeadAfter != "" && head == rec.Effects.HeadAfter)
	want := *rec.Fingerprint
	if offline || agentName == "" {
		want.Agent = cur.Agent
	}
	return want.Diff(cur, ignoreTree)
}

// live runs req with the agent and records the response, its fingerprint and its
// side effects.
func (r *Runner) live(ctx context.Context, req Request, key string) (Response, error) {
	// The fingerprint is taken before the agent runs: the input tree is the tree
	// the agent started from.
	headBefore, tree, err := readHead(req.WorkDir)
	if err != nil {
		return Response{}, fmt.Errorf("dispatch %s: %w", req.ID(), err)
	}
	fp := fingerprintAt(req, r.Agent.Name(), tree)
	filesBefore, err := ownFiles(req)
	if err != nil {
		return Response{}, err
	}
	if r.Calls != nil {
		r.Calls.Add(1)
	}
	// The agent may write the repository in any way (a repack too): the
	// repositories opened for reuse are opened afresh after it.
	defer r.repos.reset()
	end := r.repos.liveStart(req.WorkDir)
	resp, err := r.Agent.Run(ctx, req)
	shared := end()
	if err != nil {
		return resp, err
	}
	resp.Key, resp.Reused, resp.RecordedBy, resp.Fingerprint = key, false, "", &fp
	if r.Store == nil {
		return resp, nil
	}
	if resp.Effects, err = captureEffects(req, key, headBefore, filesBefore); err != nil {
		return resp, fmt.Errorf("dispatch %s: the agent's side effects were not recorded: %w", req.ID(), err)
	}
	if shared && resp.Effects != nil && resp.Effects.HeadAfter != "" {
		resp.Effects.Wave = true
	}
	if err := r.Store.Save(key, req, resp); err != nil {
		return resp, fmt.Errorf("dispatch %s: the agent's response was not recorded: %w", req.ID(), err)
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
