package redispatch

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/replaytool/replay/agent"
	"github.com/replaytool/replay/internal/errkind"
	"github.com/replaytool/replay/manifest"
	"github.com/replaytool/replay/pipeline"
	"github.com/replaytool/replay/report"
	"github.com/replaytool/replay/resume"
)

// ErrExternal is the kind of error for a dispatch of an external role (one that
// touches the world outside the tree) that a replay would run live without
// --allow-external.
var ErrExternal = errors.New("external role would run live")

// ForecastStart is where a forecast starts: the HEAD the first dispatch would run
// on and the repository that reads its commits (recorded ones included); a nil
// Repo or empty Head leaves the input trees unknown.
type ForecastStart struct {
	Repo *git.Repository
	Head string
}

// Forecast says, before anything runs, which dispatches of the work from the
// resume point a recording would serve under o (its runner's store, reuse mode and
// agent, its transform), and for each other one why not. It follows the recorded
// commits from dispatch to dispatch to know each one's input tree; after a
// dispatch that runs live the input tree is unknown. It reads only.
func Forecast(a *resume.Analysis, o Options, start ForecastStart) (*report.ReuseScore, error) {
	pl := a.Pipeline
	score := &report.ReuseScore{Mode: string(o.reuse())}
	at := position{head: start.Head}
	at.tree, at.known = treeOf(start.Repo, start.Head)
	for _, d := range resume.WorkItems(a) {
		it, rec, err := forecastOne(a, d, o, at)
		if err != nil {
			return nil, err
		}
		if it.Served {
			score.Served++
			if rec.Effects != nil && rec.Effects.HeadAfter != "" {
				at.head = rec.Effects.HeadAfter
				if at.tree, at.known = treeOf(start.Repo, at.head); !at.known {
					at.tree, at.known = rec.Effects.TreeAfter()
				}
			}
		} else {
			at = position{lastLive: d.Seq}
		}
		if pl.Profile.IsExternal(d.Role) && !it.Served {
			it.External = true
			if o.refuseExternal() {
				it.Refused = true
				score.Refused++
			}
		}
		score.Items = append(score.Items, it)
	}
	score.Total = len(score.Items)
	return score, nil
}

func (o Options) reuse() agent.Reuse {
	if o.Runner == nil || o.Runner.Reuse == "" {
		return agent.ReuseExact
	}
	return o.Runner.Reuse
}

// refuseExternal reports whether o is a replay (its entries carry a replay mode)
// that may not run an external role live.
func (o Options) refuseExternal() bool {
	return o.Extra[pipeline.ReplayModeKey] != nil && !o.AllowExternal
}

// position is the worktree a forecast dispatch would start on: its HEAD and tree,
// unknown after a dispatch that runs live (lastLive).
type position struct {
	head, tree string
	known      bool
	lastLive   int
}

// forecastOne forecasts d from position at and returns the recording that would
// serve it.
func forecastOne(a *resume.Analysis, d *pipeline.Dispatch, o Options, at position) (report.ReuseItem, *agent.Response, error) {
	pl := a.Pipeline
	it := report.ReuseItem{Seq: d.Seq, Role: d.Role, Template: d.Template}
	body, err := originalBody(pl, d, o)
	if err != nil {
		return it, nil, err
	}
	mutation := ""
	if o.Transform != nil {
		if body, mutation, err = o.Transform(d, body); err != nil {
			return it, nil, err
		}
	}
	key := agent.Key(d.Template, body)
	it.Key = key[:12]
	var store *agent.Store
	offline := false
	name := ""
	if o.Runner != nil {
		store = o.Runner.Store
		if o.Runner.Agent != nil {
			name = o.Runner.Agent.Name()
			offline = name == agent.SpecRecorded
		}
	}
	if o.reuse() == agent.ReuseNever {
		it.Reason = "--reuse never"
		return it, nil, nil
	}
	if store == nil {
		it.Reason = "no recordings kept"
		return it, nil, nil
	}
	rec, ok, err := store.Lookup(key)
	switch {
	case err != nil:
		it.Reason = "unreadable recording: " + err.Error()
		return it, nil, nil
	case !ok && mutation != "":
		it.Reason = "mutated template (" + mutation + "): no recording of the mutated body"
		return it, nil, nil
	case !ok:
		it.Reason = "absent: no recording under " + it.Key
		return it, nil, nil
	case rec.Status != manifest.StatusCompleted && !offline && !(o.Runner != nil && o.Runner.ReuseFailures):
		it.Reason = fmt.Sprintf("recorded as %s: runs live again", rec.Status)
		return it, nil, nil
	}
	req := o.request(d, body)
	if o.Resume {
		if why := ResumeServe(a)(req, rec); why != "" {
			it.Reason = why
			return it, nil, nil
		}
	}
	changed := agent.StaleAt(req, rec, name, o.reuse(), offline, at.head, at.tree)
	if !at.known && rec.Fingerprint != nil && rec.Fingerprint.InputTree != "" && o.reuse() == agent.ReuseExact {
		changed = withoutField(changed, agent.FieldInputTree)
		if len(changed) == 0 {
			it.Reason = "input tree unknown until it runs"
			if at.lastLive > 0 {
				it.Reason = fmt.Sprintf("input tree unknown: it follows seq %d, which runs live", at.lastLive)
			}
			return it, nil, nil
		}
	}
	if rec.Effects != nil && rec.Effects.Wave && rec.Effects.HeadAfter != "" {
		it.Reason = "wave effect: its commits were made beside other dispatches of its wave in one worktree and cannot be told apart"
		return it, nil, nil
	}
	if len(changed) > 0 {
		it.Changed = changed
		it.Reason = "stale: " + strings.Join(changed, ", ") + " changed"
		return it, nil, nil
	}
	it.Served = true
	return it, rec, nil
}

// treeOf returns the tree of commit head in repo, and whether it is known.
func treeOf(repo *git.Repository, head string) (string, bool) {
	if repo == nil || head == "" {
		return "", false
	}
	c, err := repo.CommitObject(plumbing.NewHash(head))
	if err != nil {
		return "", false
	}
	return c.TreeHash.String(), true
}

func withoutField(fields []string, name string) []string {
	out := fields[:0:0]
	for _, f := range fields {
		if f != name {
			out = append(out, f)
		}
	}
	return out
}

// ExternalRefusal returns the error that stops a replay before any dispatch when
// the forecast refuses an external role, naming the first one; nil otherwise.
func ExternalRefusal(score *report.ReuseScore) error {
	if score == nil {
		return nil
	}
	for _, it := range score.Items {
		if it.Refused {
			return errkind.Errorf(ErrExternal, "seq %d (%s): external role (it touches the world outside the tree) would run live during a replay (%s); nothing was dispatched — record it first, or pass --allow-external to let it run",
				it.Seq, report.SafeText(it.Role), report.SafeText(it.Reason))
		}
	}
	return nil
}
