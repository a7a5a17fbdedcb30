package checkpoint

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/replaytool/replay/report"
)

// Checkpoint is one commit of the shadow repository: a snapshot of the whole working
// tree taken for a reason (such as pre-wave-2) by a source (such as build).
type Checkpoint struct {
	Hash  plumbing.Hash
	Short string // first 8 hex characters of Hash
	Time  time.Time
	// Reason is the first field of the subject, such as pre-wave-2.
	Reason string
	// Source is the third field of the subject, such as build or quality-gate.
	Source string
	// ProjectHead is the project commit recorded in the Project-Head trailer; zero
	// for foreign checkpoints without the trailer (see Store.ProjectHeadAt).
	ProjectHead plumbing.Hash
	// Tree is the snapshot's root tree.
	Tree plumbing.Hash
	// InManifest reports whether checkpoint-manifest.md has a row for it.
	InManifest bool
}

// TrailerKey is the commit trailer naming the project's HEAD at checkpoint time.
const TrailerKey = "Project-Head"

// subjectTimeLayouts are the timestamp forms accepted in subjects and manifest rows.
var subjectTimeLayouts = []string{time.RFC3339, "2006-01-02 15:04:05", "2006-01-02T15:04:05", "2006-01-02 15:04"}

// TimeSkewTolerance is how far a checkpoint's subject or table time may be from its
// shadow commit's time before the disagreement is reported.
const TimeSkewTolerance = time.Minute

// parseTime reads a subject or table timestamp. A time without a zone is the
// orchestrator's wall clock, read in the machine's local zone (time.Local).
func parseTime(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	for _, l := range subjectTimeLayouts {
		if t, err := time.ParseInLocation(l, s, time.Local); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// skewWarning explains a subject or table time that disagrees with the shadow
// commit's own time by more than TimeSkewTolerance; "" when they agree.
func skewWarning(where, short string, stated string, statedAt, commitAt time.Time) string {
	d := statedAt.Sub(commitAt)
	if d < 0 {
		d = -d
	}
	if d <= TimeSkewTolerance {
		return ""
	}
	return fmt.Sprintf("checkpoint %s: %s time %q (read as %s local time) differs from the shadow commit's time %s by %s; using the commit's time",
		short, where, stated, statedAt.In(time.Local).Format(time.RFC3339), commitAt.Format(time.RFC3339), d.Round(time.Second))
}

// checkpointOf reads a shadow commit as a checkpoint. ok is false when its subject
// does not have the `<reason> | <timestamp> | <source>` shape. The checkpoint's time
// is the commit's own zoned committer time; the zone-less subject time is only a
// fallback when the commit has no usable time, and skew says when the two disagree.
func checkpointOf(c *object.Commit) (cp Checkpoint, ok bool, skew string) {
	cp = Checkpoint{Hash: c.Hash, Short: c.Hash.String()[:8], Tree: c.TreeHash, Time: c.Committer.When.UTC()}
	subject, body, _ := strings.Cut(c.Message, "\n")
	parts := strings.Split(subject, "|")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	cp.Reason = parts[0]
	ok = len(parts) >= 2 && cp.Reason != ""
	if len(parts) >= 2 {
		t, good := parseTime(parts[1])
		switch {
		case !good:
			ok = false
		case c.Committer.When.Unix() <= 0:
			cp.Time = t
		default:
			skew = skewWarning("subject", cp.Short, parts[1], t, c.Committer.When)
		}
	}
	if len(parts) >= 3 {
		cp.Source = strings.Join(parts[2:], " | ")
	}
	for _, line := range strings.Split(body, "\n") {
		k, v, found := strings.Cut(line, ":")
		if found && strings.EqualFold(strings.TrimSpace(k), TrailerKey) {
			if h := strings.TrimSpace(v); plumbing.IsHash(h) {
				cp.ProjectHead = plumbing.NewHash(h)
			}
		}
	}
	return cp, ok, skew
}

// MatchReason reports whether a checkpoint reason matches want by whole token:
// want must be the whole reason or be followed in it by a character that is not a
// letter or digit, so pre-wave-1 never matches pre-wave-10. A want ending in `*`
// (such as pre-debug-*) matches every reason that starts with the rest.
func MatchReason(reason, want string) bool {
	reason, want = strings.TrimSpace(reason), strings.TrimSpace(want)
	if want == "" {
		return false
	}
	if prefix, ok := strings.CutSuffix(want, "*"); ok {
		return strings.HasPrefix(reason, prefix)
	}
	if !strings.HasPrefix(reason, want) {
		return false
	}
	if len(reason) == len(want) {
		return true
	}
	next := rune(reason[len(want)])
	return !unicode.IsLetter(next) && !unicode.IsDigit(next)
}

// log returns the shadow commits from HEAD along first parents, oldest first, and
// warnings for commits whose subject is not a checkpoint subject.
func (s *Store) log() ([]Checkpoint, []string, error) {
	head, err := s.repo.Head()
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: reading the shadow HEAD: %w", s.shadowDir, err)
	}
	var (
		out      []Checkpoint
		warnings []string
		seen     = map[plumbing.Hash]bool{}
	)
	// go-git's storage lists every loose object once to answer "is it there":
	// worth it only without packs, when checkpoints are loose objects read
	// directly. With packs (after a gc, or snapshots written as packs) the store's
	// own reader takes them, through the indexes hasPacks has just opened.
	read := func(h plumbing.Hash) (*object.Commit, error) { return object.GetCommit(s.repo.Storer, h) }
	if s.objects.hasPacks() {
		defer s.objects.keepPacksOpen()()
		read = s.listedCommit
	}
	for h := head.Hash(); !h.IsZero() && !seen[h]; {
		seen[h] = true
		c, err := read(h)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: reading shadow commit %s: %w (the shadow repository is damaged)", s.shadowDir, h, err)
		}
		cp, ok, skew := checkpointOf(c)
		if !ok {
			warnings = append(warnings, fmt.Sprintf("shadow commit %s: subject %q is not `<reason> | <timestamp> | <source>`; listed with its commit time", cp.Short, firstLine(c.Message)))
		}
		if skew != "" {
			warnings = append(warnings, skew)
		}
		out = append(out, cp)
		h = plumbing.ZeroHash
		if len(c.ParentHashes) > 0 {
			h = c.ParentHashes[0]
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, warnings, nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// List returns every checkpoint, oldest first. The shadow commit log is the source
// of truth; checkpoint-manifest.md rows are merged in, and a missing, truncated or
// disagreeing manifest yields warnings.
func (s *Store) List() ([]Checkpoint, []string, error) {
	cps, warnings, err := s.log()
	if err != nil {
		return nil, nil, err
	}
	rows, path, err := s.readManifest()
	if err != nil {
		return cps, append(warnings, err.Error()), nil
	}
	return cps, append(warnings, mergeManifest(cps, rows, path)...), nil
}

// mergeManifest marks the checkpoints that have a manifest row and explains every
// disagreement between the manifest and the log.
func mergeManifest(cps []Checkpoint, rows []manifestRow, path string) []string {
	if len(cps) == 0 && len(rows) == 0 {
		return nil
	}
	if path == "" {
		return []string{"checkpoint-manifest.md not found; checkpoints are listed from the shadow commit log"}
	}
	var warnings []string
	oldest := -1
	hexes := make([]string, len(cps)) // each hash spelled once, not once a row
	for i := range cps {
		hexes[i] = cps[i].Hash.String()
	}
	for _, r := range rows {
		idx := -1
		want := strings.ToLower(r.Hash)
		for i := range cps {
			if strings.HasPrefix(hexes[i], want) {
				idx = i
			}
		}
		if idx < 0 {
			warnings = append(warnings, fmt.Sprintf("%s:%d: checkpoint %s (%s) is not in the shadow commit log; ignored", path, r.Line, r.Hash, r.Reason))
			continue
		}
		cps[idx].InManifest = true
		if oldest < 0 || idx < oldest {
			oldest = idx
		}
		if r.Reason != cps[idx].Reason {
			warnings = append(warnings, fmt.Sprintf("%s:%d: checkpoint %s has reason %q there but %q in the shadow log; using the log", path, r.Line, r.Hash, r.Reason, cps[idx].Reason))
		}
		if t, ok := parseTime(r.Timestamp); ok {
			if w := skewWarning(fmt.Sprintf("%s:%d table", path, r.Line), cps[idx].Short, r.Timestamp, t, cps[idx].Time); w != "" {
				warnings = append(warnings, w)
			}
		}
	}
	if oldest < 0 {
		oldest = 0
	}
	missing := 0
	for i := oldest; i < len(cps); i++ {
		if !cps[i].InManifest {
			missing++
		}
	}
	if missing > 0 {
		warnings = append(warnings, fmt.Sprintf("%s lacks %s that are in the shadow commit log; using the log", path, report.Count(missing, "checkpoint")))
	}
	return warnings
}

// Find returns the checkpoint named by ref: a hash prefix of at least 4 hex
// characters, HEAD for the newest, or a reason (the newest checkpoint of that reason).
func (s *Store) Find(ref string) (*Checkpoint, error) {
	ref = strings.TrimSpace(ref)
	cps, _, err := s.List()
	if err != nil {
		return nil, err
	}
	if len(cps) == 0 {
		return nil, fmt.Errorf("%s: the shadow repository has no checkpoints", s.shadowDir)
	}
	if strings.EqualFold(ref, "HEAD") {
		return &cps[len(cps)-1], nil
	}
	if len(ref) >= 4 && isHex(ref) {
		var found *Checkpoint
		for i := range cps {
			if strings.HasPrefix(cps[i].Hash.String(), strings.ToLower(ref)) {
				if found != nil {
					return nil, fmt.Errorf("checkpoint %q is ambiguous: it matches %s and %s; give more hex digits", ref, found.Short, cps[i].Short)
				}
				found = &cps[i]
			}
		}
		if found != nil {
			return found, nil
		}
	}
	for i := len(cps) - 1; i >= 0; i-- {
		if cps[i].Reason == ref {
			return &cps[i], nil
		}
	}
	for i := len(cps) - 1; i >= 0; i-- {
		if MatchReason(cps[i].Reason, ref) {
			return &cps[i], nil
		}
	}
	return nil, fmt.Errorf("no checkpoint matches %q in %s; run `replay checkpoint list` to see them", ref, s.shadowDir)
}

func isHex(s string) bool {
	for _, r := range s {
		if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
			return false
		}
	}
	return true
}

// Correlation is the checkpoint chosen for a resume boundary.
type Correlation struct {
	// Checkpoint is the newest checkpoint matching Found; nil when none matched.
	Checkpoint *Checkpoint
	// Wanted is the reason asked for first (chain[0]); Found the one that matched.
	Wanted, Found string
	// FellBack reports that the wanted reason had no checkpoint and an earlier one was used.
	FellBack bool
	// Index is the position of Found in the chain; -1 when nothing matched.
	Index int
}

// Correlate finds the newest checkpoint whose reason matches chain[0] by whole
// token, or else the first later entry of chain (earlier boundaries) that has one.
func (s *Store) Correlate(chain []string) (*Correlation, error) {
	cps, _, err := s.List()
	if err != nil {
		return nil, err
	}
	return CorrelateIn(cps, chain), nil
}

// CorrelateIn is Correlate over an already listed set of checkpoints (oldest first).
func CorrelateIn(cps []Checkpoint, chain []string) *Correlation {
	c := &Correlation{Index: -1}
	if len(chain) > 0 {
		c.Wanted = chain[0]
	}
	for i, want := range chain {
		for j := len(cps) - 1; j >= 0; j-- {
			if MatchReason(cps[j].Reason, want) {
				cp := cps[j]
				c.Checkpoint, c.Found, c.FellBack, c.Index = &cp, cp.Reason, i > 0, i
				return c
			}
		}
	}
	return c
}

// ProjectHeadAt returns the project commit the checkpoint was taken on: its trailer,
// or for a foreign checkpoint the newest commit reachable from the project's HEAD
// whose commit time is not later than the checkpoint, or a later commit of the
// branch whose changes since that one the checkpoint holds (heldSince). Zero when
// there is none.
func (s *Store) ProjectHeadAt(cp Checkpoint) (plumbing.Hash, error) {
	if !cp.ProjectHead.IsZero() {
		return cp.ProjectHead, nil
	}
	pr, err := s.projectRepo()
	if err != nil || pr == nil {
		return plumbing.ZeroHash, err
	}
	head, err := s.projectHead()
	if err != nil || head.IsZero() {
		return plumbing.ZeroHash, err
	}
	iter, err := pr.Log(&git.LogOptions{From: head})
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("%s: reading the project history: %w", s.projectDir, err)
	}
	best, bestTime := plumbing.ZeroHash, time.Time{}
	err = iter.ForEach(func(c *object.Commit) error {
		t := c.Committer.When
		if !t.After(cp.Time) && (best.IsZero() || t.After(bestTime)) {
			best, bestTime = c.Hash, t
		}
		return nil
	})
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("%s: reading the project history: %w", s.projectDir, err)
	}
	if best.IsZero() || best == head {
		return best, nil
	}
	return s.heldSince(pr, cp, head, best, nil)
}

// heldSince returns the newest commit on the first-parent line from head down to
// best whose changes since best the checkpoint holds, each file as it has it (a
// deletion: the checkpoint lacks the file), else best. The same work committed
// again after the checkpoint (a replay's commit after the original's was lost)
// stays on the branch: the restored tree is that commit's, and moving the branch
// back by time alone would leave its files uncommitted and drop the commit.
// The changes of the paths in ignore do not count (RestoreKeeping: the kept
// commits' paths, which the restore sets again on top).
func (s *Store) heldSince(pr *git.Repository, cp Checkpoint, head, best plumbing.Hash, ignore map[string]bool) (plumbing.Hash, error) {
	bc, err := pr.CommitObject(best)
	if err != nil {
		return best, nil
	}
	bt, err := bc.Tree()
	if err != nil {
		return best, nil
	}
	var held map[string]treeFile
	for h, n := head, 0; h != best && n < maxHeldWalk; n++ {
		c, err := pr.CommitObject(h)
		if err != nil || c.Committer.When.Before(bc.Committer.When) {
			break
		}
		ct, err := c.Tree()
		if err != nil {
			break
		}
		changes, err := object.DiffTree(bt, ct)
		if err != nil {
			break
		}
		if held == nil {
			if held, err = s.objects.readTreeEntries(cp.Tree); err != nil {
				return best, nil
			}
		}
		if holdsAll(held, changes, ignore) {
			return h, nil
		}
		if c.NumParents() == 0 {
			break
		}
		h = c.ParentHashes[0]
	}
	return best, nil
}

// maxHeldWalk bounds the commits heldSince looks at.
const maxHeldWalk = 200

// holdsAll reports whether the checkpoint's files hold every change: the file
// with the same content and mode, or no file where the change deletes one.
func holdsAll(held map[string]treeFile, changes object.Changes, ignore map[string]bool) bool {
	for _, ch := range changes {
		if ignore[ch.From.Name] || ignore[ch.To.Name] {
			continue
		}
		if ch.To.Name == "" {
			if _, ok := held[ch.From.Name]; ok {
				return false
			}
			continue
		}
		f, ok := held[ch.To.Name]
		if !ok || f.Hash != ch.To.TreeEntry.Hash || f.Mode != ch.To.TreeEntry.Mode {
			return false
		}
	}
	return true
}
