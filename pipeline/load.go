package pipeline

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/replaytool/replay/checkpoint"
	"github.com/replaytool/replay/internal/errkind"
	"github.com/replaytool/replay/internal/gitrepo"
	"github.com/replaytool/replay/internal/paths"
	"github.com/replaytool/replay/manifest"
	"github.com/replaytool/replay/templates"
)

// Options locate a pipeline: the user's PATH and the roots and overrides around it.
type Options struct {
	Path string
	Home string
	Tmp  string
	// SysTmp is the fixed system temporary root ("/tmp" when empty), where Crucible
	// writes the build-mode file and may keep the live dispatch directory.
	SysTmp  string
	Cwd     string
	Repo    string // project working tree; default: Cwd (never a directory a run's file names)
	Scratch string // default: from the marker, else paths.ScratchDir(Home, Repo)
	Shadow  string // default: beside the scratch dir, else paths.ShadowDir(Home, Repo)
	// ProfileFile, when set, is a pipeline profile JSON file that replaces the
	// profile chosen from the run's files (--profile).
	ProfileFile string
	// WarmHistory starts reading the project history CommitLog returns in the
	// background as soon as the dispatches are read, for a caller that will decide
	// the resume point: the walk then overlaps the rest of the load.
	WarmHistory bool
}

// Pipeline is a crashed pipeline as read from disk, read-only.
type Pipeline struct {
	Location   *manifest.Location
	Manifest   *manifest.Manifest
	Marker     *manifest.Marker
	Profile    *templates.Profile
	Dispatches []*Dispatch
	Evidence   Evidence
	// Checkpoints are the run's own checkpoints: taken at or after its start.
	Checkpoints []CheckpointRef
	// ForeignCheckpoints are the shadow repository's checkpoints taken before the
	// run started: another run's, a candidate only as an explicit fallback.
	ForeignCheckpoints []CheckpointRef
	Store              *checkpoint.Store // nil when there is no shadow repository
	Project            *git.Repository   // nil when the project is not a git repository
	ProjectDir         string
	// ProjectErr is set when the shadow repository belongs to another directory than
	// ProjectDir: a plan warns, a resume or restore refuses.
	ProjectErr error
	// Shadow is ShadowDir as the shadow directory check passed it (the zero value
	// when it did not, or when there is none): readers and the lock take it, so a
	// command checks its shadow once.
	Shadow checkpoint.ShadowDir
	// SysTmp is the system temporary root the pipeline's /tmp files are read from.
	SysTmp      string
	ScratchDir  string
	ShadowDir   string
	DispatchDir string
	NextSeq     int
	Warnings    []string
	// Files maps a seq to its dispatch file path, when the file exists.
	Files map[int]string
	// Times maps a seq to its dispatch file's header timestamp, A/B replays included.
	Times map[int]time.Time

	// ProfileReason says why Profile was chosen ("the marker's skill", ...).
	ProfileReason string
	// plan caches the task texts of the project's plan, read on first use.
	plan map[int]string
	// taskText caches taskSaid by task number.
	taskText map[int]string
	// copies are the run's other dispatch directories (live, durable) Load read
	// besides DispatchDir; copyMax is the largest seq their manifests use.
	copies  []string
	copyMax int
	// resolve are the roots the run was found under; others caches
	// OtherSessions.
	resolve    manifest.ResolveOptions
	others     []OtherDispatch
	othersRead bool
	// warmLog is the CommitLog Load started reading (WarmHistory), handed out by
	// the first CommitLog asked for the same window; later ones read afresh.
	warmLog *GitLog
}

// Load reads a pipeline without changing anything on disk.
func Load(o Options) (*Pipeline, error) {
	// A bad --profile is a usage error, reported before the run is even looked for.
	var explicit *templates.Profile
	if o.ProfileFile != "" {
		var err error
		if explicit, err = templates.LoadFlag(o.ProfileFile); err != nil {
			return nil, errkind.Errorf(ErrBadProfile, "--profile: %v; fix the file or leave --profile out to use the profile the run names", err)
		}
	}
	loc, err := manifest.Resolve(o.Path, manifest.ResolveOptions{Home: o.Home, Tmp: o.Tmp, SysTmp: o.SysTmp, Cwd: o.Cwd})
	if err != nil {
		return nil, err
	}
	pl := &Pipeline{Location: loc, Marker: loc.Marker, DispatchDir: loc.DispatchDir, SysTmp: o.SysTmp, Files: map[int]string{}, Times: map[int]time.Time{},
		resolve: manifest.ResolveOptions{Home: o.Home, Tmp: o.Tmp, SysTmp: o.SysTmp, Cwd: o.Cwd}}
	if pl.SysTmp == "" {
		pl.SysTmp = paths.SystemTmp
	}
	// The manifest, the checkpoint listing, the dispatch directory and (for a
	// decision) the project history are read at once; what each says is taken
	// below in the order it always was, warnings included.
	r := pl.startReads(o)
	m, err := r.manifest()
	if err != nil {
		r.wait()
		return nil, err
	}
	pl.Manifest = m
	pl.Warnings = append(pl.Warnings, loc.Notes...)
	for _, w := range m.Warnings {
		pl.Warnings = append(pl.Warnings, fmt.Sprintf("%s: %s", loc.ManifestPath, w))
	}
	if pl.ProjectErr != nil {
		pl.Warn("%v", pl.ProjectErr)
	}
	pl.mergeCopies(o.Tmp)
	if err := pl.readDispatches(o.Tmp, r.files, r.filesErr); err != nil {
		r.wait()
		return nil, err
	}
	pl.Warnings = append(pl.Warnings, r.projectWarnings...)
	if o.WarmHistory && pl.Project != nil {
		pl.takeWarmLog(r.warm)
	}
	pl.takeCheckpoints(r.checkpoints())
	pl.scopeCheckpoints()
	pl.scopeOtherSessions()
	pl.chooseProfile(explicit, o.ProfileFile)
	next, err := pl.nextSeq()
	if err != nil {
		if pl.warmLog != nil {
			pl.warmLog.stop()
		}
		return nil, err
	}
	pl.NextSeq = next
	return pl, nil
}

// Warn adds a warning about the run to Warnings.
func (pl *Pipeline) Warn(format string, args ...any) {
	pl.Warnings = append(pl.Warnings, fmt.Sprintf(format, args...))
}

// locateDirs settles the scratch, shadow and project directories with the Locator.
func (pl *Pipeline) locateDirs(o Options) {
	l := &Locator{Home: o.Home, Cwd: o.Cwd, Repo: o.Repo, Scratch: o.Scratch, Shadow: o.Shadow, Location: pl.Location}
	pl.ProjectDir, pl.ScratchDir, pl.ShadowDir = l.ProjectDir(), l.ScratchDir(), l.ShadowDir()
	if pl.ShadowDir != "" {
		var note string
		note, pl.ProjectErr = GuardShadowProject(pl.ShadowDir, pl.ProjectDir) // Load warns of it in order
		if note != "" {
			pl.Warn("%s", note)
		}
		if pl.ProjectErr == nil {
			pl.Shadow, pl.ProjectErr = checkpoint.ProveShadowDir(pl.ShadowDir)
		}
	}
	if pl.ProjectErr == nil {
		pl.ProjectErr = CheckProjectsDir(pl.ScratchDir, o.Home)
	}
	if pl.ProjectErr == nil {
		pl.ProjectErr = linkedDispatchDir(pl.DispatchDir, o)
	}
}

// readDispatches joins manifest entries with the dispatch files on disk: those of
// the dispatch dir read (files0 and err0: ReadDispatchDir of pl.DispatchDir, read
// by the caller),
// and of the live one the marker names (validated: it must be a dispatch directory
// inside the scratch dir or $TMPDIR).
func (pl *Pipeline) readDispatches(tmp string, files0 []manifest.DispatchFile, err0 error) error {
	dirs := []string{pl.DispatchDir}
	if pl.Marker != nil && pl.Marker.DispatchDir != "" && pl.ScratchDir != "" {
		markerPath := filepath.Join(pl.ScratchDir, manifest.MarkerFile)
		live, err := manifest.ValidateDispatchDir(markerPath, pl.Marker.DispatchDir, pl.ScratchDir, tmp, pl.SysTmp)
		switch {
		case err != nil:
			pl.Warn("%v; the live dispatch directory is not read", err)
		case live != pl.DispatchDir:
			dirs = append(dirs, live)
		}
	}
	pl.Evidence = Evidence{Outputs: map[int][]string{}, Receipts: map[int][]string{}}
	// Size hints: about one dispatch per entry, one name per file of the first
	// directory (the maps grow past them when a live directory adds more).
	n := max(len(pl.Manifest.Entries), len(files0))
	found := &dispatchFiles{headers: make(map[int]*manifest.DispatchHeader, n), templates: make(map[int]string, n), names: make(map[string]bool, len(files0))}
	if len(pl.Files) == 0 && len(pl.Times) == 0 {
		pl.Files, pl.Times = make(map[int]string, n), make(map[int]time.Time, n)
	}
	for i, dir := range dirs {
		if i > 0 && !retriedOnItsSeq(pl.Manifest) && sameNames(dir, found.names) {
			// The live copy holds only files the durable copy has: nothing to learn
			// from reading them again but its receipts. Unless a dispatch was
			// retried on its own seq: the retry rewrote its file's header in the
			// live directory, and its commit window starts there.
			pl.readReceipts(filepath.Join(dir, "receipt-ledger.jsonl"))
			continue
		}
		files, err := files0, err0
		if i > 0 {
			files, err = manifest.ReadDispatchDir(dir)
		}
		if err != nil {
			if i == 0 {
				return err
			}
			continue // the live copy is often gone
		}
		pl.addFiles(found, files)
		pl.readReceipts(filepath.Join(dir, "receipt-ledger.jsonl"))
	}
	pl.joinEntries(found)
	return nil
}

// dispatchFiles are the dispatch files read so far, by seq.
type dispatchFiles struct {
	headers   map[int]*manifest.DispatchHeader
	templates map[int]string
	names     map[string]bool
}

// addFiles takes the outputs and dispatch headers of one dispatch directory; a seq
// already read from an earlier directory keeps its first file unless this
// directory's header is newer (the latest attempt's).
func (pl *Pipeline) addFiles(found *dispatchFiles, files []manifest.DispatchFile) {
	for _, f := range files {
		found.names[f.Name] = true
		switch f.Kind {
		case manifest.KindOutput:
			if !slices.Contains(pl.Evidence.Outputs[f.Seq], f.Name) {
				pl.Evidence.Outputs[f.Seq] = append(pl.Evidence.Outputs[f.Seq], f.Name)
			}
		case manifest.KindDispatch:
			if prev, seen := found.headers[f.Seq]; seen && (f.Header == nil || !f.Header.Timestamp.After(prev.Timestamp)) {
				// The copy read first keeps the seq unless this one is newer: a retry
				// on the same seq rewrites the file in the live directory, after the
				// durable copy was taken.
				continue
			}
			if f.Header == nil {
				pl.Warn("%v", f.HeaderErr)
				if f.Cut != nil {
					if pl.Evidence.Cut == nil {
						pl.Evidence.Cut = map[int]*manifest.CutDispatchHeader{}
					}
					pl.Evidence.Cut[f.Seq] = f.Cut
				}
				continue
			}
			h := f.Header
			found.headers[f.Seq], found.templates[f.Seq] = h, f.Template
			pl.Files[f.Seq] = f.Path
			if !h.Timestamp.IsZero() {
				pl.Times[f.Seq] = h.Timestamp
			}
		}
	}
}

// joinEntries makes the Dispatches: one per manifest entry (A/B replay entries
// left out), and one per dispatch file without a manifest line.
func (pl *Pipeline) joinEntries(found *dispatchFiles) {
	headers, templatesOf := found.headers, found.templates
	seen := make(map[int]bool, len(pl.Manifest.Entries))
	pl.Dispatches = slices.Grow(pl.Dispatches, len(pl.Manifest.Entries))
	for i := range pl.Manifest.Entries {
		e := &pl.Manifest.Entries[i]
		seen[e.Seq] = true
		if IsABEntry(e) {
			continue // an experiment in its own worktree, not work done for the pipeline
		}
		pl.Dispatches = append(pl.Dispatches, pl.fromEntry(e, headers[e.Seq], templatesOf[e.Seq]))
	}
	for seq, h := range headers {
		if seen[seq] {
			continue
		}
		d := &Dispatch{Seq: seq, File: filepath.Base(pl.Files[seq]), Template: templatesOf[seq], Role: templatesOf[seq], Phase: h.Phase, Time: h.Timestamp}
		if n, err := strconv.Atoi(h.Task); err == nil {
			d.Task = &n
		}
		d.Pipeline = h.Pipeline
		pl.Dispatches = append(pl.Dispatches, d)
		pl.Warn("%s has no manifest line: its phase counts as incomplete", pl.Files[seq])
	}
	pl.fillMissingPhases()
	SortDispatches(pl.Dispatches)
	pl.reportSeqGaps(seen, headers)
}

// reportSeqGaps warns about the seqs below the highest one seen that have neither a
// manifest line nor a dispatch file: lost or torn dispatches. The gaps are described
// as ranges, so the cost is proportional to the seqs present, not to the highest one.
func (pl *Pipeline) reportSeqGaps(recorded map[int]bool, files map[int]*manifest.DispatchHeader) {
	present := make([]int, 0, len(recorded)+len(files))
	for seq := range recorded {
		present = append(present, seq)
	}
	for seq := range files {
		if !recorded[seq] {
			present = append(present, seq)
		}
	}
	if text := describeGaps(missingRanges(present, pl.Manifest.MaxSeq), pl.Manifest.Stats.TornSeq); text != "" {
		pl.Warn("seq gap: no valid manifest line and no dispatch file for %s; such a seq is never reused", text)
	}
}

// sameNames reports whether every numbered file of dir ("<N>-...") is in names.
// It is false when dir cannot be listed.
// retriedOnItsSeq reports whether a seq of m was dispatched more than once (a retry
// on the same seq, which rewrites the seq's dispatch file).
func retriedOnItsSeq(m *manifest.Manifest) bool {
	if m == nil {
		return false
	}
	for _, statuses := range m.History {
		n := 0
		for _, s := range statuses {
			if s == manifest.StatusDispatched {
				n++
			}
		}
		if n > 1 {
			return true
		}
	}
	return false
}

func sameNames(dir string, names map[string]bool) bool {
	list, err := manifest.ListNames(dir)
	if err != nil {
		return false
	}
	for _, n := range list {
		if n[0] >= '0' && n[0] <= '9' && !names[n] {
			return false
		}
	}
	return true
}

func (pl *Pipeline) fromEntry(e *manifest.Entry, h *manifest.DispatchHeader, tmpl string) *Dispatch {
	d := &Dispatch{
		Seq: e.Seq, File: e.File, Role: e.Role, Task: e.Task, Status: e.Status,
		History: pl.Manifest.History[e.Seq], DurationS: e.DurationS, Recorded: true, Entry: e,
	}
	if e.ReplayOf != nil {
		d.ReplayOf = *e.ReplayOf
	}
	if e.ReplaySession != nil {
		d.ReplaySession = *e.ReplaySession
	}
	if e.Phase != nil {
		d.Phase = *e.Phase
	}
	if e.Summary != nil {
		d.Summary = *e.Summary
	}
	d.Template = tmpl
	if d.Template == "" {
		d.Template = templateFromFile(e.File)
	}
	if h != nil {
		d.Time = h.Timestamp
		if d.Phase == "" {
			d.Phase = h.Phase
		}
		d.Pipeline = h.Pipeline
	}
	return d
}

// templateFromFile returns "build-implementer" for "11-build-implementer.md".
func templateFromFile(file string) string {
	_, rest, ok := strings.Cut(file, "-")
	if !ok {
		return ""
	}
	return strings.TrimSuffix(rest, ".md")
}

// fillMissingPhases places a dispatch with no phase in the phase of the nearest
// earlier dispatch that has one.
func (pl *Pipeline) fillMissingPhases() {
	SortDispatches(pl.Dispatches)
	last := ""
	for _, d := range pl.Dispatches {
		if d.Phase == "" && last != "" {
			d.Phase = last
			pl.Warn("seq %d has no phase on any manifest line or header; placed in phase %s with the dispatch before it", d.Seq, last)
		}
		if d.Phase != "" {
			last = d.Phase
		}
	}
}

func (pl *Pipeline) readReceipts(path string) {
	receipts, warns, err := manifest.ReadReceipts(path)
	if err != nil {
		return
	}
	for _, w := range warns {
		pl.Warn("%s: %s", path, w)
	}
	for _, r := range receipts {
		if seq, ok := r.Seq(); ok && !slices.Contains(pl.Evidence.Receipts[seq], r.DispatchID) {
			pl.Evidence.Receipts[seq] = append(pl.Evidence.Receipts[seq], r.DispatchID)
		}
	}
}

// openProject opens the project repository and returns what to warn about it.
func (pl *Pipeline) openProject() []string {
	repo, err := gitrepo.PlainOpen(pl.ProjectDir) //replay:door the project's own repository, named by the user (--repo or the current directory)
	if err != nil {
		return []string{fmt.Sprintf("%s is not a git repository (%v): commits of mutating dispatches cannot be verified; pass --repo", pl.ProjectDir, err)}
	}
	pl.Project = repo
	if pl.Marker == nil || !pl.Marker.HasBranch() {
		return nil
	}
	if head, err := repo.Head(); err == nil && head.Name().IsBranch() && head.Name().Short() != pl.Marker.Branch {
		return []string{fmt.Sprintf("the project is on branch %s but the pipeline ran on %s: its commits are read from %s, and a resume will refuse until you switch (git switch %s)",
			head.Name().Short(), pl.Marker.Branch, pl.Marker.Branch, pl.Marker.Branch)}
	}
	return nil
}

// HistoryRef is the branch the pipeline's commits are on: the marker's branch when
// it exists in the project, else HEAD.
func (pl *Pipeline) HistoryRef() plumbing.ReferenceName {
	if pl.Project != nil && pl.Marker != nil && pl.Marker.HasBranch() {
		name := plumbing.NewBranchReferenceName(pl.Marker.Branch)
		if _, err := pl.Project.Reference(name, true); err == nil {
			return name
		}
	}
	return plumbing.HEAD
}

// checkpointListing is what readCheckpoints read of the shadow repository.
type checkpointListing struct {
	store    *checkpoint.Store
	cps      []checkpoint.Checkpoint
	warnings []string
}

// readCheckpoints opens and lists the shadow repository, touching nothing of pl
// but its directories (it runs beside the other reads).
func (pl *Pipeline) readCheckpoints() checkpointListing {
	if pl.ShadowDir == "" {
		return checkpointListing{}
	}
	var st *checkpoint.Store
	var err error
	if pl.Shadow.Checked() {
		st, err = checkpoint.OpenShadow(pl.Shadow, pl.ProjectDir)
	} else {
		st, err = checkpoint.Open(pl.ShadowDir, pl.ProjectDir) // the check names why
	}
	if errors.Is(err, checkpoint.ErrNoShadow) {
		return checkpointListing{warnings: []string{fmt.Sprintf("no shadow checkpoint repository at %s", pl.ShadowDir)}}
	}
	if err != nil {
		return checkpointListing{warnings: []string{fmt.Sprintf("shadow checkpoint repository %s: %v", pl.ShadowDir, err)}}
	}
	cps, warns, err := st.List()
	if err != nil {
		return checkpointListing{store: st, warnings: []string{fmt.Sprintf("shadow checkpoint repository %s: %v", pl.ShadowDir, err)}}
	}
	return checkpointListing{store: st, cps: cps, warnings: warns}
}

// takeCheckpoints keeps a listing's store, checkpoints and warnings.
func (pl *Pipeline) takeCheckpoints(l checkpointListing) {
	pl.Store = l.store
	pl.Warnings = append(pl.Warnings, l.warnings...)
	for _, c := range l.cps {
		pl.Checkpoints = append(pl.Checkpoints, CheckpointRef{Hash: c.Hash.String(), Short: c.Short, Reason: c.Reason, Source: c.Source, Time: c.Time})
	}
}

// CommitLog returns the project history from the pipeline's first dispatch on.
func (pl *Pipeline) CommitLog() CommitLog {
	if pl.Project == nil {
		return nil
	}
	ref, since := pl.historyWindow()
	if w := pl.warmLog; w != nil {
		pl.warmLog = nil
		if w.ref == ref && w.since.Equal(since) {
			return w
		}
	}
	return NewGitLog(pl.Project, ref, since)
}

// takeWarmLog keeps the history walk started before the dispatches were joined
// (from the dispatch directory's earliest header time) as the warm log, narrowed to
// the pipeline's window; a walk that started too late in the history (a live
// directory's header was older) is left to finish unused.
func (pl *Pipeline) takeWarmLog(w *GitLog) {
	ref, since := pl.historyWindow()
	if w == nil || w.ref != ref || w.floor.After(since) {
		w = NewGitLog(pl.Project, ref, since)
		w.Start()
	}
	w.narrow(since)
	pl.warmLog = w
}

// historyWindow is the branch and the oldest time CommitLog reads: an hour before
// the earliest dispatch time (the zero time when no dispatch has one).
func (pl *Pipeline) historyWindow() (plumbing.ReferenceName, time.Time) {
	earliest := time.Time{}
	for _, d := range pl.Dispatches {
		earliest = earlier(earliest, d.Time)
	}
	return pl.HistoryRef(), windowStart(earliest)
}

// CheckpointMarker returns what a restore needs of the run's .pipeline-active
// marker; nil when the run has none.
func (pl *Pipeline) CheckpointMarker() *checkpoint.Marker {
	if pl.Marker == nil {
		return nil
	}
	return &checkpoint.Marker{Branch: pl.Marker.Branch}
}

// LockShadow takes the project's replay lock in the shadow directory
// (checkpoint.LockProject), on the proof Load's check left when there is one;
// nil when there is no shadow directory.
func (pl *Pipeline) LockShadow() (*checkpoint.Lock, error) {
	if pl.Shadow.Checked() {
		return checkpoint.LockShadow(pl.Shadow)
	}
	return checkpoint.LockProject(pl.ShadowDir)
}
