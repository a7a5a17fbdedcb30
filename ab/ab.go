package ab

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/replaytool/replay/agent"
	"github.com/replaytool/replay/checkpoint"
	"github.com/replaytool/replay/internal/gitrepo"
	"github.com/replaytool/replay/internal/runfile"
	"github.com/replaytool/replay/internal/safewrite"
	"github.com/replaytool/replay/mutate"
	"github.com/replaytool/replay/pipeline"
	"github.com/replaytool/replay/report"
)

// WorktreesDir is the folder of the scratch dir that holds A/B replay worktrees.
const WorktreesDir = "replay-worktrees"

// Options describe an A/B experiment: the template mutations and where the
// templates come from.
type Options struct {
	Mutations []mutate.Mutation
	// Templates is the skill's current template folder; "" when unknown (the
	// template part of a body is then found by its context heading).
	Templates string
	// Pinned is the folder of templates read from --template-ref; "" when not pinned.
	Pinned string
}

// Uses reports whether the experiment changes dispatch d.
func (o Options) Uses(d *pipeline.Dispatch) bool {
	return mutate.For(o.Mutations, d.Template) != nil
}

// Transform swaps, at dispatch-file write time, the template part of a body for the
// mutation's replacement (or the pinned template), keeping the injected context.
func (o Options) Transform(d *pipeline.Dispatch, body []byte) ([]byte, string, error) {
	m := mutate.For(o.Mutations, d.Template)
	var repl []byte
	switch {
	case m != nil:
		repl = m.Text
	case o.Pinned != "":
		path, err := mutate.FindTemplate(o.Pinned, d.Template)
		if err != nil {
			return body, "", nil // not pinned: the original text stays
		}
		if repl, err = runfile.ReadFile(path, runfile.Template); err != nil {
			return nil, "", err
		}
	default:
		return body, "", nil
	}
	var orig []byte
	if o.Templates != "" {
		if path, err := mutate.FindTemplate(o.Templates, d.Template); err == nil {
			orig, _ = runfile.ReadFile(path, runfile.Template)
		}
	}
	out, _, err := mutate.Substitute(body, orig, repl)
	if err != nil {
		return nil, "", fmt.Errorf("seq %d (%s): cannot locate the template part of its dispatch body to swap it (%w); nothing of it was re-dispatched — pass --templates DIR with the template it was built from", d.Seq, d.Template, err)
	}
	if m == nil {
		return out, "", nil
	}
	return out, mutate.Label(*m), nil
}

// Worktree is the isolated working tree an A/B replay runs in: the checkpoint's
// files, a git repository whose objects fall back on the project's (alternates), on
// branch replay/<session> at the checkpoint's project head.
type Worktree struct {
	Dir     string
	Session string
	Base    plumbing.Hash
	Branch  string
}

// storeSuffix names the folder beside a worktree that holds its recorded responses.
const storeSuffix = ".ab"

// worktreeDir returns <scratch>/replay-worktrees/<session>.
func worktreeDir(pl *pipeline.Pipeline, session string) string {
	return filepath.Join(pl.ScratchDir, WorktreesDir, session)
}

// PrepareWorktree creates the isolated worktree of an A/B replay from checkpoint cp.
// The session is made unique by the directory itself: a name already taken (a
// concurrent replay) gets a "-N" suffix. The user's tree is never touched.
func PrepareWorktree(pl *pipeline.Pipeline, cp *pipeline.CheckpointRef, session string) (*Worktree, error) {
	if pl.Store == nil || cp == nil {
		return nil, errors.New("an A/B replay starts from a checkpoint, and none was found for its resume point; create one with `replay checkpoint create` or pass --from-phase")
	}
	if pl.ScratchDir == "" {
		return nil, errors.New("an A/B replay keeps its worktree in the scratch directory, and none is known; pass --scratch DIR")
	}
	// The scratch dir is the run's: its worktrees folder, the session's worktree and
	// its responses folder are created through a no-follow root, so a link or a file
	// planted in their place is refused and nothing is written through it.
	wt := &Worktree{Session: session}
	for n := 2; ; n++ {
		if SessionTaken(pl, wt.Session) { // a session of the run (a pulled run's too) is never reused
			wt.Session = session + "-" + strconv.Itoa(n)
			continue
		}
		rel := filepath.Join(WorktreesDir, wt.Session)
		err := safewrite.MkdirNew(pl.ScratchDir, rel)
		if err == nil {
			if err := safewrite.MkdirIn(pl.ScratchDir, rel+storeSuffix); err != nil {
				return nil, errors.Join(err, safewrite.RemoveIn(pl.ScratchDir, rel))
			}
			wt.Dir = worktreeDir(pl, wt.Session)
			break
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		wt.Session = session + "-" + strconv.Itoa(n)
	}
	return materialize(pl, cp, wt)
}

// PrepareWorktreeIn creates an isolated worktree like PrepareWorktree's in dir, a
// directory that must not exist yet, on branch replay/<session>.
func PrepareWorktreeIn(pl *pipeline.Pipeline, cp *pipeline.CheckpointRef, dir, session string) (*Worktree, error) {
	if pl.Store == nil || cp == nil {
		return nil, errors.New("an isolated worktree starts from a checkpoint, and none was taken by then; create one with `replay checkpoint create` or choose a later seq")
	}
	if err := safewrite.MkdirNew(filepath.Dir(dir), filepath.Base(dir)); err != nil {
		return nil, err
	}
	return materialize(pl, cp, &Worktree{Dir: dir, Session: session})
}

// materialize writes checkpoint cp's files into wt.Dir and makes it a repository
// on branch replay/<session> at the checkpoint's project head.
func materialize(pl *pipeline.Pipeline, cp *pipeline.CheckpointRef, wt *Worktree) (*Worktree, error) {
	full, err := pl.Store.Find(cp.Hash)
	if err != nil {
		return nil, err
	}
	st, err := checkpoint.Open(pl.ShadowDir, wt.Dir)
	if err != nil {
		return nil, err
	}
	if _, err := st.Materialize(*full); err != nil {
		return nil, err
	}
	head, err := pl.Store.ProjectHeadAt(*full)
	if err != nil {
		return nil, err
	}
	wt.Base, wt.Branch = head, "replay/"+wt.Session
	if err := initWorktreeRepo(pl.ProjectDir, wt); err != nil {
		return nil, fmt.Errorf("worktree %s: %w", wt.Dir, err)
	}
	return wt, nil
}

// initWorktreeRepo makes wt.Dir a git repository sharing the project's objects, with
// its branch at the base commit and an index equal to that commit's tree (the files
// on disk are the checkpoint's, which may hold untracked files besides).
func initWorktreeRepo(projectDir string, wt *Worktree) error {
	repo, err := gitrepo.InitNew(wt.Dir, nil)
	if err != nil {
		return err
	}
	objects := filepath.Join(projectDir, ".git", "objects")
	if err := safewrite.WriteFileIn(wt.Dir, filepath.Join(".git", "objects", "info", "alternates"), []byte(objects+"\n"), 0o644); err != nil {
		return err
	}
	cfg, err := repo.Config()
	if err != nil {
		return err
	}
	cfg.Raw.Section("gc").SetOption("auto", "0")
	if err := repo.SetConfig(cfg); err != nil {
		return err
	}
	repo, err = gitrepo.Open(wt.Dir)
	if err != nil {
		return err
	}
	if wt.Base.IsZero() {
		return nil
	}
	branch := plumbing.NewBranchReferenceName(wt.Branch)
	if err := repo.Storer.SetReference(plumbing.NewHashReference(branch, wt.Base)); err != nil {
		return err
	}
	if err := repo.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, branch)); err != nil {
		return err
	}
	w, err := repo.Worktree()
	if err != nil {
		return err
	}
	// A mixed reset writes the index only; the files on disk stay the checkpoint's.
	return w.Reset(&git.ResetOptions{Commit: wt.Base, Mode: git.MixedReset})
}

// ownStore is the store in wt's responses folder, created inside the scratch dir
// through its no-follow root (beside wt.Dir when the worktree lies elsewhere).
func ownStore(pl *pipeline.Pipeline, wt *Worktree) *agent.Store {
	if pl.ScratchDir != "" {
		if rel, err := filepath.Rel(pl.ScratchDir, wt.Dir+storeSuffix); err == nil && filepath.IsLocal(rel) {
			return agent.OpenStoreIn(pl.ScratchDir, rel)
		}
	}
	return agent.OpenStoreIn(filepath.Dir(wt.Dir), filepath.Base(wt.Dir)+storeSuffix)
}

// Store is where an A/B replay keeps its recorded responses: beside its worktree
// (never inside it, which would change the artifact diff), so that a later resume of
// the pipeline never reuses a response whose side effects happened in an isolated
// worktree. It still reuses the pipeline's own recordings and other A/B sessions'.
func Store(pl *pipeline.Pipeline, wt *Worktree) *agent.Store {
	st := ownStore(pl, wt).Also(pl.DispatchDir)
	others, _ := filepath.Glob(filepath.Join(pl.ScratchDir, WorktreesDir, "*"+storeSuffix))
	for _, o := range others {
		if o != wt.Dir+storeSuffix {
			st.Also(o)
		}
	}
	return st
}

// EntryExtra is the extra manifest key every A/B replay entry carries.
func EntryExtra() map[string]json.RawMessage {
	return map[string]json.RawMessage{pipeline.ReplayModeKey: json.RawMessage(pipeline.ReplayModeAB)}
}

// CompareSession compares, on a freshly loaded pipeline, replay session (newest when "") with the original run:
// dispatch outcomes from the manifest, and the artifact diff between the original
// run's final commit (the pipeline branch's head in the project, the crashed tip)
// and the replay's (its worktree's HEAD). It is the comparison made when the replay
// runs; the report records both commits so RecompareSession can render it again.
func CompareSession(pl *pipeline.Pipeline, session string, mutations []string) (*report.ReplayDiff, error) {
	c, err := Compare(CompareInput{Profile: pl.Profile, Entries: pl.Manifest.Entries, Session: session, Original: pl.Location.SessionID, Times: pl.Times, Mutations: mutations})
	if err != nil {
		return nil, err
	}
	stats, err := artifactDiff(pl, c.ReplaySession)
	if err != nil {
		return nil, err
	}
	return c.Report(stats), nil
}

// RecompareSession renders the comparison of replay session (newest when "") again,
// from what was recorded when the replay ran: the last replay-diff.jsonl line of the
// session gives the mutations and the two final commits, so the artifact diff never
// follows the branch head as it moves later. When those commits can no longer be
// read (the replay worktree was removed), the recorded numbers are used. A session
// with no record is compared live, with a warning.
func RecompareSession(pl *pipeline.Pipeline, session string) (*report.ReplayDiff, []string, error) {
	c, err := Compare(CompareInput{Profile: pl.Profile, Entries: pl.Manifest.Entries, Session: session, Original: pl.Location.SessionID, Times: pl.Times})
	if err != nil {
		return nil, nil, err
	}
	path := filepath.Join(pl.DispatchDir, DiffJSONLFile)
	rec, warns := LastDiffRecord(path, c.ReplaySession)
	if rec == nil || rec.OriginalFinalSHA == "" || rec.ReplayFinalSHA == "" {
		warns = append(warns, fmt.Sprintf("%s has no recorded final commits for replay session %s; the artifact diff is taken from the branch head now, which may have moved since the replay", path, c.ReplaySession))
		stats, err := artifactDiff(pl, c.ReplaySession)
		if err != nil {
			return nil, warns, err
		}
		return c.Report(stats), warns, nil
	}
	if len(rec.Mutations) > 0 {
		c.Mutations = append([]string{}, rec.Mutations...)
	}
	stats, err := artifactDiffBetween(pl, c.ReplaySession, plumbing.NewHash(rec.OriginalFinalSHA), plumbing.NewHash(rec.ReplayFinalSHA))
	d := c.Report(stats)
	if err != nil {
		warns = append(warns, fmt.Sprintf("%v; using the numbers recorded in %s", err, path))
		d.ArtifactDiff, d.OriginalFinalSHA, d.ReplayFinalSHA = rec.Artifact, rec.OriginalFinalSHA, rec.ReplayFinalSHA
	}
	return d, warns, nil
}

// DiffJSONLFile is the file in the dispatch dir that each A/B comparison appends to.
const DiffJSONLFile = "replay-diff.jsonl"

// LastDiffRecord returns the last replay-diff record of session in the JSONL file at
// path; nil when there is none. Lines that are not records are skipped with a warning.
func LastDiffRecord(path, session string) (*report.DiffRecord, []string) {
	data, err := runfile.ReadFile(path, runfile.DiffLog)
	if err != nil {
		return nil, nil
	}
	var (
		found *report.DiffRecord
		warns []string
	)
	for i, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		r, err := report.ParseDiffLine(line)
		if err != nil {
			warns = append(warns, fmt.Sprintf("%s:%d: %v; skipped", path, i+1, err))
			continue
		}
		if r.ReplaySession == session {
			found = r
		}
	}
	return found, warns
}

// artifactDiff compares the original run's final commit with the final commit of
// the replay session's worktree; unknown (zero) when either is missing.
func artifactDiff(pl *pipeline.Pipeline, session string) (ArtifactStats, error) {
	if pl.Project == nil || session == "" {
		return ArtifactStats{}, nil
	}
	orig, err := pl.Project.Reference(pl.HistoryRef(), true)
	if err != nil {
		return ArtifactStats{}, nil
	}
	dir := worktreeDir(pl, session)
	if _, err := os.Stat(filepath.Join(dir, ".git")); err != nil {
		return ArtifactStats{}, nil
	}
	repo, err := gitrepo.Open(dir)
	if err != nil {
		return ArtifactStats{}, fmt.Errorf("replay worktree %s: %w", dir, err)
	}
	head, err := repo.Head()
	if err != nil {
		return ArtifactStats{}, fmt.Errorf("replay worktree %s: %w", dir, err)
	}
	return ArtifactDiff(repo, orig.Hash(), head.Hash())
}

// artifactDiffBetween compares two recorded commits, read from the replay session's
// worktree repository (which shares the project's objects) or else the project.
func artifactDiffBetween(pl *pipeline.Pipeline, session string, from, to plumbing.Hash) (ArtifactStats, error) {
	repo := pl.Project
	dir := worktreeDir(pl, session)
	if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
		if r, err := gitrepo.Open(dir); err == nil {
			repo = r
		}
	}
	if repo == nil {
		return ArtifactStats{}, fmt.Errorf("no repository to read commits %s and %s from", from.String()[:7], to.String()[:7])
	}
	return ArtifactDiff(repo, from, to)
}
