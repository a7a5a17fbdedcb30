package fork

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/replaytool/replay/ab"
	"github.com/replaytool/replay/agent"
	"github.com/replaytool/replay/internal/errkind"
	"github.com/replaytool/replay/internal/runfile"
	"github.com/replaytool/replay/internal/safewrite"
	"github.com/replaytool/replay/manifest"
	"github.com/replaytool/replay/pipeline"
	"github.com/replaytool/replay/resume"
)

// Request is a fork as the user asked for it.
type Request struct {
	// Root is the original run of the lineage, loaded.
	Root *pipeline.Pipeline
	// Parent is the session of the run to fork: the root's or one of its forks'.
	Parent string
	At     int
	// Substitutions are the --substitute values (SEQ=FILE), paths relative to Cwd.
	Substitutions []string
	Reason        string
	Cwd           string
	// Tmp is the temporary root the state at the fork seq reads the build mode from.
	Tmp string
	Now time.Time
}

// Result is the fork that was made.
type Result struct {
	Record *Record
	// Dir is the fork's directory; Worktree its working tree ("" when no checkpoint
	// had been taken by the fork seq).
	Dir, Worktree string
	Branch        string
	Warnings      []string
}

// substitution is one parsed --substitute value.
type substitution struct {
	Substitution
	path string
	data []byte
}

// Create makes the fork: it checks every input first and writes nothing when one is
// wrong, then creates the fork's directory with its own manifest (the substituted
// entries), its recordings, its worktree and, last, its lineage record.
func Create(r Request) (*Result, error) {
	pl := r.Root
	if pl.ProjectErr != nil { // a linked scratch or dispatch dir, another project's shadow: as resume and A/B
		return nil, pl.ProjectErr
	}
	chain, err := Chain(pl, r.Parent)
	if err != nil {
		return nil, err
	}
	if err := resume.CheckSeq(pl, "--at", r.At); err != nil {
		return nil, err
	}
	_, last, _ := resume.SeqRange(pl)
	subs, err := parseSubstitutions("--substitute", r.Substitutions, r.Cwd, r.At, last)
	if err != nil {
		return nil, err
	}
	parentEntries, err := chain.Entries()
	if err != nil {
		return nil, err
	}
	for _, s := range subs {
		if _, ok := parentEntries[s.Seq]; !ok {
			return nil, errkind.Errorf(ErrBadFork, "--substitute %d=%s: the parent run has no entry for seq %d; give a seq it recorded", s.Seq, s.path, s.Seq)
		}
	}
	// The checkpoint in effect where the lineage first left the original run.
	cpSeq := min(r.At, chain.firstForkSeq())
	st, err := resume.StateAt(pl, cpSeq, r.Tmp)
	if err != nil {
		return nil, err
	}
	dir, session, err := makeDir(pl, resume.NewSession(pl, r.Now), strconv.FormatInt(r.Now.Unix(), 10))
	if err != nil {
		return nil, err
	}
	res, err := fill(pl, dir, session, r, chain, parentEntries, subs, st.Checkpoint)
	if err != nil {
		return nil, errors.Join(err, removeDir(dir))
	}
	return res, nil
}

// fill writes the fork's files into its new directory dir.
func fill(pl *pipeline.Pipeline, dir, session string, r Request, chain *Lineage, parent map[int]manifest.Entry, subs []substitution, cp *pipeline.CheckpointRef) (*Result, error) {
	rec := &Record{Version: RecordVersion, Session: session, Parent: chain.Session(), Root: pl.Location.SessionID,
		RootManifest: pl.Manifest.Path, ForkSeq: r.At, Reason: r.Reason, CreatedAt: r.Now.UTC().Format(time.RFC3339)}
	res := &Result{Record: rec, Dir: dir}
	var lines []byte
	store := forkStore(pl, dir)
	for _, s := range subs {
		e, key, err := substitute(pl, store, session, parent[s.Seq], s, r.Now)
		if err != nil {
			return nil, err
		}
		s.Key = key
		rec.Substitutions = append(rec.Substitutions, s.Substitution)
		if lines, err = e.AppendJSON(lines); err != nil {
			return nil, err
		}
		lines = append(lines, '\n')
	}
	if err := safewrite.WriteAtomicIn(dir, ManifestFile, lines); err != nil {
		return nil, err
	}
	if cp == nil {
		res.Warnings = append(res.Warnings, fmt.Sprintf("no checkpoint had been taken by seq %d: the fork has no working tree", min(r.At, chain.firstForkSeq())))
	} else {
		wt, err := ab.PrepareWorktreeIn(pl, cp, filepath.Join(dir, WorktreeDir), session)
		if err != nil {
			return nil, fmt.Errorf("fork %s: working tree from checkpoint %s: %w", session, cp.Short, err)
		}
		rec.Checkpoint, rec.Worktree = cp.Hash, WorktreeDir
		res.Worktree, res.Branch = wt.Dir, wt.Branch
	}
	if err := writeRecord(dir, rec); err != nil {
		return nil, err
	}
	return res, nil
}

// substitute turns the parent's entry e into the fork's entry with the response of
// s, and saves that response as the fork's recording for the dispatch (when its
// dispatch file, and so its recording key, is known).
func substitute(pl *pipeline.Pipeline, store *agent.Store, session string, e manifest.Entry, s substitution, now time.Time) (manifest.Entry, string, error) {
	e, resp := answered(e, s, session)
	key := ""
	if path := pl.Files[s.Seq]; path != "" {
		data, err := runfile.ReadFileNoFollow(path, runfile.Dispatch) // its body keys the recording the fork keeps
		if err != nil {
			return e, "", err
		}
		h, body, err := manifest.ParseDispatchHeader(data)
		if err != nil {
			return e, "", fmt.Errorf("%s: %w", path, err)
		}
		tmpl := h.Template
		key = agent.Key(tmpl, body)
		req := agent.Request{Seq: s.Seq, Role: e.Role, Template: tmpl, Task: e.Task, Session: session, Body: body, Now: func() time.Time { return now }}
		if e.Phase != nil {
			req.Phase = *e.Phase
		}
		if e.ModelTier != nil {
			req.ModelTier = *e.ModelTier
		}
		// The answer is the user's, not an agent's, and stands whatever tree the
		// dispatch starts from: agent and input tree stay open.
		fp := agent.FingerprintFor(req, "", "")
		resp.Fingerprint = &fp
		if err := store.Save(key, req, resp); err != nil {
			return e, "", err
		}
	}
	return e, key, nil
}

// answered returns the parent's entry e as answered by the substitution s in run
// session, and the response it stands for.
func answered(e manifest.Entry, s substitution, session string) (manifest.Entry, agent.Response) {
	resp := agent.Response{Status: manifest.StatusCompleted, Output: s.data, OutputChars: len([]rune(string(s.data))), Agent: "substitute:" + s.File}
	resp.Summary, resp.Verdict = summarize(s.data)
	seq, sess, mode := s.Seq, session, fmt.Sprintf("seq %d -> %s", s.Seq, s.File)
	e.Status, e.Summary, e.ReplayOf, e.ReplaySession, e.Mutation = resp.Status, &resp.Summary, &seq, &sess, &mode
	zero := 0.0
	e.DurationS = &zero
	e.Extra = nil
	e.Line = 0
	return e, resp
}

// summarize takes a response's summary (the text after its last "SUMMARY:" line,
// else its first non-empty line) and verdict (a line that is PASS, FAIL or BLOCKED,
// or "VERDICT: <word>"); the verdict leads the summary when it does not name it.
func summarize(data []byte) (summary, verdict string) {
	for _, line := range strings.Split(string(data), "\n") {
		t := strings.TrimSpace(line)
		if v, ok := strings.CutPrefix(strings.ToUpper(t), "VERDICT:"); ok {
			t = strings.TrimSpace(v)
		}
		switch strings.ToUpper(t) {
		case "PASS", "FAIL", "BLOCKED":
			verdict = strings.ToUpper(t)
		}
		if rest, ok := strings.CutPrefix(t, "SUMMARY:"); ok {
			summary = strings.TrimSpace(rest)
		} else if summary == "" && t != "" && !strings.HasPrefix(strings.ToUpper(strings.TrimSpace(line)), "VERDICT:") && verdict != strings.ToUpper(t) {
			summary = t
		}
	}
	if verdict != "" && !strings.Contains(strings.ToUpper(summary), verdict) {
		summary = strings.TrimSpace("Verdict " + verdict + ". " + summary)
	}
	if r := []rune(summary); len(r) > 200 {
		summary = string(r[:200])
	}
	return summary, verdict
}

// parseSubstitutions checks every SEQ=FILE: the seq lies in the child [at, last]
// and the file is a readable regular file.
func parseSubstitutions(flag string, vals []string, cwd string, at, last int) ([]substitution, error) {
	var out []substitution
	seen := map[int]bool{}
	for _, v := range vals {
		seqText, file, ok := strings.Cut(v, "=")
		seq, err := strconv.Atoi(seqText)
		if !ok || err != nil || file == "" {
			return nil, errkind.Errorf(ErrBadFork, "%s %q: write SEQ=FILE, e.g. %s 16=verdict.txt", flag, v, flag)
		}
		if seq < at || seq > last {
			if flag == "--substitute" {
				return nil, errkind.Errorf(ErrBadFork, "%s %d=%s: seq %d is outside the child: give a seq from %d (the fork seq) to %d", flag, seq, file, seq, at, last)
			}
			return nil, errkind.Errorf(ErrBadFork, "%s %d=%s: seq %d is outside the run: give a seq from %d to %d", flag, seq, file, seq, at, last)
		}
		if seen[seq] {
			return nil, errkind.Errorf(ErrBadFork, "%s %d=%s: seq %d is given twice; give one file per seq", flag, seq, file, seq)
		}
		seen[seq] = true
		path := file
		if !filepath.IsAbs(path) {
			path = filepath.Join(cwd, path)
		}
		data, err := runfile.ReadFile(path, runfile.Recording)
		if err != nil {
			return nil, errkind.Errorf(ErrBadFork, "%s %d=%s: %v; give an existing file with the response", flag, seq, file, err)
		}
		sum := sha256.Sum256(data)
		out = append(out, substitution{Substitution: Substitution{Seq: seq, File: filepath.Base(path), SHA256: hex.EncodeToString(sum[:])}, path: path, data: data})
	}
	return out, nil
}

// makeDir creates <scratch>/replay-forks/<session>, or when that session is taken
// by another run <base>-N with the lowest free N; it returns the directory and the
// session.
func makeDir(pl *pipeline.Pipeline, session, base string) (string, string, error) {
	if pl.ScratchDir == "" {
		return "", "", errkind.New(ErrBadFork, "a fork lives in the run's scratch directory, and none is known; pass --scratch DIR")
	}
	// A run's files never choose where a fork is written: the forks folder and the
	// fork's own are created through a no-follow root, refusing a link or a file
	// planted in their place.
	if err := safewrite.MkdirIn(pl.ScratchDir, ForksDir); err != nil {
		return "", "", errkind.Errorf(ErrBadFork, "%w", err)
	}
	name := session
	for n := 2; ; n++ {
		if sessionTaken(pl, name) {
			name = base + "-" + strconv.Itoa(n)
			continue
		}
		err := safewrite.MkdirNew(pl.ScratchDir, filepath.Join(ForksDir, name))
		if err == nil {
			return filepath.Join(pl.ScratchDir, ForksDir, name), name, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", "", errkind.Errorf(ErrBadFork, "%w", err)
		}
		name = base + "-" + strconv.Itoa(n)
	}
}

// forkStore is the store of recordings in the fork directory dir, which lies in
// the scratch dir's forks folder: saves create its responses folder through the
// scratch dir's no-follow root, refusing a link or a file planted on the way.
func forkStore(pl *pipeline.Pipeline, dir string) *agent.Store {
	return agent.OpenStoreIn(pl.ScratchDir, filepath.Join(ForksDir, filepath.Base(dir)))
}

// sessionTaken reports whether a run of pl's tree already has the session id
// (ab.SessionTaken's rule: one for every kind of session).
func sessionTaken(pl *pipeline.Pipeline, name string) bool {
	return ab.SessionTaken(pl, name)
}

// removeDir removes a fork directory this package created, never following a link
// out of it (os.RemoveAll removes links, not their targets).
func removeDir(dir string) error { return safewrite.RemoveAllPath(dir) }
