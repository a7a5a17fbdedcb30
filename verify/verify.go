// Package verify classifies the recordings of a pipeline's dispatches: valid (a
// replay may reuse it), stale (an input of its fingerprint changed), absent (none
// recorded) or corrupt (it cannot be read or fails its integrity check).
package verify

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/replaytool/replay/agent"
	"github.com/replaytool/replay/internal/errkind"
	"github.com/replaytool/replay/internal/runfile"
	"github.com/replaytool/replay/manifest"
	"github.com/replaytool/replay/pipeline"
)

// ErrUnfaithful is the kind of the error Report.Err returns when a recording is not
// valid: a fully recorded replay of the pipeline would not be faithful.
var ErrUnfaithful = errors.New("recordings not all valid")

// Class is the verdict on one dispatch's recording.
type Class string

// The classes of a recording.
const (
	Valid   Class = "valid"
	Stale   Class = "stale"
	Absent  Class = "absent"
	Corrupt Class = "corrupt"
)

// Item is the verdict on the recording of one dispatch.
type Item struct {
	Seq      int    `json:"seq"`
	Dispatch string `json:"dispatch"`
	Key      string `json:"key,omitempty"`
	Class    Class  `json:"class"`
	// Changed names the fingerprint fields that changed (stale).
	Changed []string `json:"changed,omitempty"`
	// Reason says what is wrong or notable, in words.
	Reason string `json:"reason,omitempty"`
}

// Report is the verdict on every dispatch of a pipeline that has a dispatch file.
type Report struct {
	DispatchDir string        `json:"dispatch_dir"`
	Items       []Item        `json:"items"`
	Counts      map[Class]int `json:"counts"`
}

// Options tune the verification.
type Options struct {
	// Agent, when set, is the agent a replay would run with: a recording made by
	// another agent is stale (field agent). Empty: the agent is not compared.
	Agent string
}

// Err returns an ErrUnfaithful error naming the counts when any recording is not
// valid, nil otherwise.
func (r *Report) Err() error {
	bad := r.Counts[Stale] + r.Counts[Absent] + r.Counts[Corrupt]
	if bad == 0 {
		return nil
	}
	return errkind.Errorf(ErrUnfaithful, "%s: %d of %d dispatches have no valid recording (%d stale, %d absent, %d corrupt); a recorded replay would not be faithful",
		r.DispatchDir, bad, len(r.Items), r.Counts[Stale], r.Counts[Absent], r.Counts[Corrupt])
}

// Run classifies the recording of every dispatch of pl with a dispatch file, in
// seq order. It reads only.
func Run(pl *pipeline.Pipeline, o Options) (*Report, error) {
	store := agent.OpenStore(pl.DispatchDir)
	rep := &Report{DispatchDir: pl.DispatchDir, Counts: map[Class]int{}}
	for _, d := range pl.Dispatches {
		path := pl.Files[d.Seq]
		if path == "" {
			continue
		}
		it, err := classify(pl, store, d, path, o)
		if err != nil {
			return nil, err
		}
		rep.Items = append(rep.Items, it)
		rep.Counts[it.Class]++
	}
	return rep, nil
}

// classify returns the verdict on d's recording.
func classify(pl *pipeline.Pipeline, store *agent.Store, d *pipeline.Dispatch, path string, o Options) (Item, error) {
	it := Item{Seq: d.Seq, Dispatch: fmt.Sprintf("%d-%s", d.Seq, d.Template)}
	data, err := runfile.ReadFile(path, runfile.Dispatch)
	if err != nil {
		return it, fmt.Errorf("reading dispatch file %s: %w", path, err)
	}
	_, body, err := manifest.ParseDispatchHeader(data)
	if err != nil {
		return it, fmt.Errorf("%s: %w", path, err)
	}
	it.Key = agent.Key(d.Template, body)
	rec, ok, err := store.Lookup(it.Key)
	switch {
	case err != nil:
		it.Class, it.Reason = Corrupt, err.Error()
		return it, nil
	case !ok:
		it.Class, it.Reason = Absent, "no recording under "+it.Key[:12]
		return it, nil
	case rec.Fingerprint == nil:
		it.Class, it.Reason = Valid, "version 1 recording: no fingerprint, reused by its key alone"
		return it, nil
	}
	it.Changed = changed(pl, d, rec.Fingerprint, o)
	it.Class = Valid
	if len(it.Changed) > 0 {
		it.Class, it.Reason = Stale, strings.Join(it.Changed, ", ")+" changed since it was recorded"
	}
	return it, nil
}

// changed returns the fingerprint fields of fp that no longer hold for d: its role,
// its model tier, the agent when o names one, and the input tree, which must still
// be in the project repository for a replay to start from it.
func changed(pl *pipeline.Pipeline, d *pipeline.Dispatch, fp *agent.Fingerprint, o Options) []string {
	var out []string
	if fp.Role != d.Role {
		out = append(out, agent.FieldRole)
	}
	tier := ""
	if d.Entry != nil && d.Entry.ModelTier != nil {
		tier = *d.Entry.ModelTier
	}
	if fp.ModelTier != tier {
		out = append(out, agent.FieldModelTier)
	}
	if o.Agent != "" && fp.Agent != "" && fp.Agent != agent.AgentIdentity(o.Agent, pl.ProjectDir) {
		out = append(out, agent.FieldAgent)
	}
	if fp.InputTree != "" && pl.Project != nil {
		if _, err := pl.Project.TreeObject(plumbing.NewHash(fp.InputTree)); err != nil {
			out = append(out, agent.FieldInputTree)
		}
	}
	return out
}
