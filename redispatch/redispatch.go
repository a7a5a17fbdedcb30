package redispatch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/replaytool/replay/agent"
	"github.com/replaytool/replay/internal/runfile"
	"github.com/replaytool/replay/internal/safewrite"
	"github.com/replaytool/replay/manifest"
	"github.com/replaytool/replay/pipeline"
	"github.com/replaytool/replay/report"
	"github.com/replaytool/replay/resume"
)

// parallelWindow is how close the header times of same-role dispatches of one wave
// must be for them to count as dispatched together.
const parallelWindow = time.Minute

// Options steer the re-dispatch loop.
type Options struct {
	Runner *agent.Runner
	// Jobs bounds how many dispatches of one parallel group run at once.
	Jobs    int
	Session string
	// Replica names the replica of a replicated A/B run this is (agent.Request's
	// Replica), "" outside one.
	Replica string
	Now     func() time.Time
	// WorkDir is the working tree the agents work in.
	WorkDir string
	// Timeout bounds one agent call; 0 means none.
	Timeout time.Duration
	// Template returns the text of a template, for dispatches whose file is gone.
	Template func(name string) ([]byte, error)
	// Transform may rewrite a dispatch body (A/B mutations); it returns the new body
	// and the mutation label to record, or "" when it left the body alone.
	Transform func(d *pipeline.Dispatch, body []byte) ([]byte, string, error)
	// Progress is told when each dispatch starts and finishes; nil is silent.
	Progress ProgressReporter
	// Log receives warnings ("warning: ..." lines); nil is silent.
	Log io.Writer
	// Extra are manifest keys added to every entry written (A/B replays mark theirs).
	Extra map[string]json.RawMessage
	// ManifestPath and DispatchDir are where the entries and dispatch files go;
	// empty means the pipeline's own (a fork keeps its own apart from its parent's).
	ManifestPath, DispatchDir string
	// Resume marks the re-dispatch of a resume: its work runs live, and a
	// recording stands in only where ResumeServe proves it reproduces the work
	// (A/B replays and forks leave it unset: recordings are their mock).
	Resume bool
	// AllowExternal lets a replay (entries marked by a replay mode in Extra) run
	// dispatches of external roles live; without it such a dispatch that no
	// recording serves stops the replay before anything is dispatched.
	AllowExternal bool
	// TemplateHash returns the hex sha256 of the template content a dispatch is
	// built from ("" when unknown), for the fingerprint of its recording; nil hashes
	// the template Template reads.
	TemplateHash func(d *pipeline.Dispatch) string
}

// target returns where o writes: its ManifestPath and DispatchDir, else pl's.
func (o Options) target(pl *pipeline.Pipeline) (manifestPath, dispatchDir string) {
	manifestPath, dispatchDir = o.ManifestPath, o.DispatchDir
	if manifestPath == "" {
		manifestPath = pl.Location.ManifestPath
	}
	if dispatchDir == "" {
		dispatchDir = pl.DispatchDir
	}
	return manifestPath, dispatchDir
}

// Outcome is what became of one re-dispatched dispatch.
type Outcome struct {
	Original *pipeline.Dispatch
	Seq      int
	File     string
	Mutation string
	Response agent.Response
}

// Report sums up a re-dispatch run.
type Report struct {
	Outcomes []Outcome
	Reused   int
	Live     int
	Failed   int
	// Stopped is set when a failed dispatch stopped the run before its end.
	Stopped string
	// NotStarted are the work items no attempt of which has a manifest line
	// (resume.WorkItem.NotStarted): not sent, the skill dispatches them again.
	NotStarted []*pipeline.Dispatch
	// Warnings name what the replay noticed but let pass: a dispatch of a pure role
	// whose live run created commits.
	Warnings []string
}

// groups splits work into parallel groups: consecutive dispatches of the same role,
// phase and wave whose header times lie within parallelWindow of the group's first.
func groups(work []*pipeline.Dispatch) [][]*pipeline.Dispatch {
	var out [][]*pipeline.Dispatch
	for _, d := range work {
		if n := len(out); n > 0 {
			g := out[n-1]
			first := g[0]
			if first.Role == d.Role && first.Phase == d.Phase && first.Wave == d.Wave &&
				!first.Time.IsZero() && !d.Time.IsZero() && d.Time.Sub(first.Time) < parallelWindow {
				out[n-1] = append(g, d)
				continue
			}
		}
		out = append(out, []*pipeline.Dispatch{d})
	}
	return out
}

// Run re-executes the work from the resume point on, in original order,
// appending the normal dispatched → final lifecycle to the manifest with replay_of
// and replay_session. Each new seq is one more than every seq ever used, and the
// manifest line is appended before the dispatch file is written, so a crash at any
// point leaves a manifest the next resume continues from without reusing a seq.
func Run(ctx context.Context, a *resume.Analysis, o Options) (*Report, error) {
	pl := a.Pipeline
	if o.Jobs < 1 {
		o.Jobs = 1
	}
	rep := &Report{}
	var work []*pipeline.Dispatch
	resume.WorkItems(a) // groups the items of an Analysis built with Redo only
	for _, it := range a.Items {
		if it.NotStarted() {
			// its agent never ran and nothing proves its file whole: the
			// skill writes and dispatches it again from its own instructions
			rep.NotStarted = append(rep.NotStarted, it.Dispatch)
			if o.Log != nil {
				fmt.Fprintf(o.Log, "seq %d (%s %s): its dispatch file has no manifest line, so its agent never started and its body may be cut by the crash; not sent: the skill dispatches it again\n", it.Dispatch.Seq, it.Dispatch.Role, it.Dispatch.TaskLabel())
			}
			continue
		}
		work = append(work, it.Dispatch)
	}
	if o.Resume && o.Runner != nil && o.Runner.Serve == nil {
		r := *o.Runner
		r.Serve = ResumeServe(a)
		o.Runner = &r
	}
	if err := guardExternal(a, &o); err != nil {
		return rep, err
	}
	done := 0
	for _, g := range groups(work) {
		prepared := make([]*prepared, 0, len(g))
		for _, d := range g {
			p, err := prepare(pl, d, o)
			if err != nil {
				return rep, err
			}
			prepared = append(prepared, p)
		}
		outcomes := runGroup(ctx, pl, prepared, o, done, len(work))
		done += len(g)
		for _, oc := range outcomes {
			rep.Outcomes = append(rep.Outcomes, oc)
			switch {
			case oc.Response.Status != manifest.StatusCompleted:
				rep.Failed++
			case oc.Response.Reused:
				rep.Reused++
			default:
				rep.Live++
			}
			if w := pureCommitted(pl, oc); w != "" {
				rep.Warnings = append(rep.Warnings, w)
				if o.Log != nil {
					fmt.Fprintf(o.Log, "warning: %s\n", report.SafeText(w))
				}
			}
		}
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		for _, oc := range outcomes {
			if oc.Response.Status != manifest.StatusCompleted {
				rep.Stopped = fmt.Sprintf("seq %d (%s, replay of %d) ended %s: %s", oc.Seq, oc.Original.Role, oc.Original.Seq, oc.Response.Status, oc.Response.Reason)
				return rep, nil
			}
		}
	}
	return rep, nil
}

// prepared is a dispatch whose seq is taken and whose file is written.
type prepared struct {
	d        *pipeline.Dispatch
	seq      int
	file     string
	path     string
	body     []byte
	mutation string
	entry    manifest.Entry
}

// prepare takes the next seq, appends the dispatched line and writes the dispatch file.
func prepare(pl *pipeline.Pipeline, d *pipeline.Dispatch, o Options) (*prepared, error) {
	body, err := originalBody(pl, d, o)
	if err != nil {
		return nil, err
	}
	mutation := ""
	if o.Transform != nil {
		if body, mutation, err = o.Transform(d, body); err != nil {
			return nil, err
		}
	}
	var path string
	var content []byte
	manifestPath, dispatchDir := o.target(pl)
	floor := 0
	if filepath.Clean(dispatchDir) == filepath.Clean(pl.DispatchDir) {
		// The run's own directory: above every seq of its other copies too.
		floor = pl.NextSeq
	}
	e, err := manifest.AppendNextFrom(manifestPath, floor, func(seq int) (manifest.Entry, error) {
		name := fmt.Sprintf("%d-%s.md", seq, d.Template)
		var err error
		if path, err = manifest.SafeJoin(dispatchDir, name); err != nil {
			return manifest.Entry{}, err
		}
		h := manifest.DispatchHeader{Template: d.Template, Pipeline: pl.Profile.Skill, Phase: d.Phase, Timestamp: o.Now().UTC(), DispatchDir: dispatchDir + string(filepath.Separator)}
		if d.Task != nil {
			h.Task = strconv.Itoa(*d.Task)
		}
		content = manifest.FormatDispatchFile(h, body)
		e := newEntry(d, seq, name, o.Session, mutation)
		e.Extra = o.Extra
		chars := utf8.RuneCount(content)
		e.InputChars = &chars
		return e, nil
	})
	if err != nil {
		return nil, err
	}
	seq, name := e.Seq, e.File
	if err := safewrite.WriteAtomic(path, content); err != nil {
		return nil, fmt.Errorf("writing dispatch file %s: %w", path, err)
	}
	return &prepared{d: d, seq: seq, file: name, path: path, body: body, mutation: mutation, entry: e}, nil
}

// newEntry is the dispatched line of a re-dispatch of d.
func newEntry(d *pipeline.Dispatch, seq int, file, session, mutation string) manifest.Entry {
	e := manifest.Entry{Seq: seq, File: file, Role: d.Role, Task: d.Task, Status: manifest.StatusDispatched}
	if d.Phase != "" {
		ph := d.Phase
		e.Phase = &ph
	}
	if d.Entry != nil {
		e.ModelTier = d.Entry.ModelTier
	}
	of := d.Seq
	e.ReplayOf = &of
	sess := session
	e.ReplaySession = &sess
	if mutation != "" {
		m := mutation
		e.Mutation = &m
	}
	return e
}

// originalBody is the body of d's dispatch file, or one regenerated from its
// template and the manifest metadata when the file is gone.
func originalBody(pl *pipeline.Pipeline, d *pipeline.Dispatch, o Options) ([]byte, error) {
	if path := pl.Files[d.Seq]; path != "" {
		// Its body goes to the agent and into the new dispatch file: never read
		// through a link put in the file's place after the listing.
		data, err := runfile.ReadFileNoFollow(path, runfile.Dispatch)
		if err != nil {
			return nil, fmt.Errorf("reading dispatch file %s: %w", path, err)
		}
		_, body, err := manifest.ParseDispatchHeader(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return body, nil
	}
	if o.Template == nil {
		return nil, fmt.Errorf("seq %d (%s): its dispatch file is gone and no template folder was given; pass --templates DIR to regenerate it from the template", d.Seq, d.Role)
	}
	text, err := o.Template(d.Template)
	if err != nil {
		return nil, fmt.Errorf("seq %d (%s): its dispatch file is gone and its template %q cannot be read (%v); faithful replay is impossible — restore the template or pass --templates DIR with current templates", d.Seq, d.Role, d.Template, err)
	}
	task := "none"
	if d.Task != nil {
		task = strconv.Itoa(*d.Task)
	}
	return append(append([]byte{}, text...), fmt.Sprintf("\n## Context\n%s role %s, phase %s, task %s (original seq %d).\n", pipeline.RebuiltContextPrefix, d.Role, d.Phase, task, d.Seq)...), nil
}

// runGroup runs the agents of one group, up to o.Jobs at once, and appends their
// final lines.
func runGroup(ctx context.Context, pl *pipeline.Pipeline, ps []*prepared, o Options, done, total int) []Outcome {
	out := make([]Outcome, len(ps))
	sem := make(chan struct{}, o.Jobs)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i, p := range ps {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int, p *prepared) {
			defer wg.Done()
			defer func() { <-sem }()
			dp := p.progress(done+i+1, total)
			if o.Progress != nil {
				o.Progress.DispatchStarted(dp)
			}
			resp := call(ctx, pl, p, o)
			final := p.entry
			final.Status = resp.Status
			dur := resp.DurationS
			final.DurationS = &dur
			summary := resp.Summary
			final.Summary = &summary
			chars := resp.OutputChars
			final.OutputChars = &chars
			final.Extra = finalExtra(o.Extra, resp)
			manifestPath, _ := o.target(pl)
			err := manifest.Append(manifestPath, final)
			mu.Lock()
			defer mu.Unlock()
			if err != nil && resp.Status == manifest.StatusCompleted {
				resp.Status, resp.Reason = manifest.StatusError, "appending the completion line failed: "+err.Error()
			}
			out[i] = Outcome{Original: p.d, Seq: p.seq, File: p.file, Mutation: p.mutation, Response: resp}
			if o.Progress != nil {
				o.Progress.DispatchFinished(dp, finishedLine(dp, resp))
			}
		}(i, p)
	}
	wg.Wait()
	return out
}

// finalExtra are the extra keys of a completion line: the run's own, "reused"
// and the dispatch that recorded it ("recorded_by") when a recording served it, else, in a replay (its entries carry a replay mode),
// "live_reason" saying why none did, for the comparison's reuse score.
func finalExtra(extra map[string]json.RawMessage, resp agent.Response) map[string]json.RawMessage {
	if !resp.Reused && (resp.LiveReason == "" || extra[pipeline.ReplayModeKey] == nil) {
		return extra
	}
	out := make(map[string]json.RawMessage, len(extra)+1)
	for k, v := range extra {
		out[k] = v
	}
	if resp.Reused {
		out["reused"] = json.RawMessage("true")
		if by, err := json.Marshal(resp.RecordedBy); err == nil && resp.RecordedBy != "" {
			// its commits were made in that dispatch's window (resume.RecordedByKey)
			out[resume.RecordedByKey] = by
		}
	} else if why, err := json.Marshal(resp.LiveReason); err == nil {
		out["live_reason"] = why
	}
	return out
}

func call(ctx context.Context, pl *pipeline.Pipeline, p *prepared, o Options) agent.Response {
	req := o.request(p.d, p.body)
	_, req.DispatchDir = o.target(pl)
	req.Seq, req.DispatchFile = p.seq, p.path
	resp, err := o.Runner.Run(ctx, req)
	switch {
	case err == nil:
	case resp.Status != "":
		// The agent ran; only keeping its recording failed. Keep its result.
		if o.Log != nil {
			fmt.Fprintf(o.Log, "warning: seq %d: %s\n", p.seq, report.SafeText(err.Error()))
		}
	default:
		return agent.Response{Status: manifest.StatusError, Reason: err.Error(), Summary: "replay could not run the agent: " + err.Error()}
	}
	if p.mutation != "" && strings.HasPrefix(resp.LiveReason, "absent") {
		resp.LiveReason = "mutated template (" + p.mutation + "): no recording of the mutated body"
	}
	return resp
}

// request is the agent request of a dispatch of d with body, before its seq and
// dispatch file are known (Seq is d's own until then).
func (o Options) request(d *pipeline.Dispatch, body []byte) agent.Request {
	req := agent.Request{
		Seq: d.Seq, Role: d.Role, Phase: d.Phase, Task: d.Task, Template: d.Template,
		Session: o.Session, Replica: o.Replica, WorkDir: o.WorkDir, Body: body, Timeout: o.Timeout, Now: o.Now,
		TemplateSHA256: o.templateHash(d),
	}
	if d.Entry != nil && d.Entry.ModelTier != nil {
		req.ModelTier = *d.Entry.ModelTier
	}
	return req
}

// templateHash is the hex sha256 of the template d is built from, "" when unknown.
func (o Options) templateHash(d *pipeline.Dispatch) string {
	if o.TemplateHash != nil {
		return o.TemplateHash(d)
	}
	if o.Template == nil {
		return ""
	}
	text, err := o.Template(d.Template)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(text)
	return hex.EncodeToString(sum[:])
}
