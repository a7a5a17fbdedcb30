package checkpoint

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/replaytool/replay/report"
)

// PreviewListed is how many paths and commits of each kind a preview names.
const PreviewListed = 10

// RestorePreview says, before anything is written, what a restore would do to the
// project: the files it overwrites, removes and creates, the commits the branch
// moves past, the safety checkpoint it takes and how to undo it.
type RestorePreview struct {
	ProjectDir string `json:"project_dir"`
	Checkpoint string `json:"checkpoint"`
	Reason     string `json:"reason"`
	// Overwrite, Remove and Create hold the first PreviewListed paths of each kind;
	// the counts are the totals.
	Overwrite      []PreviewPath `json:"overwrite"`
	OverwriteCount int           `json:"overwrite_count"`
	Remove         []PreviewPath `json:"remove"`
	RemoveCount    int           `json:"remove_count"`
	Create         []PreviewPath `json:"create"`
	CreateCount    int           `json:"create_count"`
	// AtRisk counts the overwritten or removed files with uncommitted or untracked work.
	AtRisk int `json:"at_risk"`
	// Branch is the branch that moves (empty on a detached HEAD or no repository).
	Branch string `json:"branch"`
	// From and To are the project commits before and after; empty when unknown or unmoved.
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
	// MovedPast lists the first commits the branch moves back past; MovedPastCount is the total.
	MovedPast      []PreviewCommit `json:"moved_past"`
	MovedPastCount int             `json:"moved_past_count"`
	// Kept lists the first commits of another run that the restore applies again on
	// top of the checkpoint (Store.RestoreKeeping), with the hash each gets there;
	// KeptCount is the total. They are not among MovedPast.
	Kept      []PreviewCommit `json:"kept,omitempty"`
	KeptCount int             `json:"kept_count,omitempty"`
	// Safety describes the safety checkpoint the restore takes first. The preview
	// names no undo command: the checkpoint it would restore does not exist yet
	// (one named by its reason would find an older one after a kill before it is
	// taken); the restore prints the undo, by hash, once the checkpoint is taken.
	Safety string `json:"safety"`
	// AlreadyThere is set when the working tree equals the checkpoint's tree and the
	// branch is where the restore would put it: the restore has nothing to do.
	AlreadyThere bool `json:"already_there"`
}

// PreviewPath is one file a restore touches, with the work it would replace flagged.
type PreviewPath struct {
	Path string `json:"path"`
	// Uncommitted is set when the file on disk differs from the project's HEAD.
	Uncommitted bool `json:"uncommitted,omitempty"`
	// Untracked is set when git does not know the file (not in HEAD nor the index).
	Untracked bool `json:"untracked,omitempty"`
}

// PreviewCommit is a project commit the branch moves past.
type PreviewCommit struct {
	Short   string `json:"short"`
	Subject string `json:"subject"`
	// Again is the short hash of a kept commit's copy on top of the checkpoint.
	Again string `json:"again,omitempty"`
}

// Preview computes what restoring cp would do, read-only: it hashes the working
// tree without storing anything and writes nothing in the project or the shadow
// repository. Refusals that Restore would make (ignored files in the way) are
// returned as the same errors.
func (s *Store) Preview(cp Checkpoint) (*RestorePreview, error) {
	reads := s.startReads(cp, false)
	cur, walkErr := s.walkHashed()
	if err := reads.wait(); err != nil {
		return nil, err
	}
	if walkErr != nil {
		return nil, walkErr
	}
	return s.preview(cp, cur, reads.target, nil, nil)
}

// restoreReads are the reads a restore decides on that do not need the working
// tree (the checkpoint's files, the project index, HEAD's files): they run while
// the tree is walked and hashed. Their errors are returned in the order the reads
// were made one after the other before, so a failing restore says the same thing.
type restoreReads struct {
	wg sync.WaitGroup

	// rec is the checkpoint's safety record, read for a restore (withIndex).
	rec       safetyRecord
	recErr    error
	target    map[string]treeFile
	targetErr error
	idx       *index.Index
	idxErr    error
	// indexDone is indexIsHead of idx; headErr its error.
	indexDone bool
	headErr   error
}

// startReads starts reading cp's files and, when withIndex is set (a restore), its
// safety record, the project index and whether it is HEAD's tree. HEAD's files are
// read either way: commitFiles keeps them for trackedFiles (an error there is met
// again when it asks).
func (s *Store) startReads(cp Checkpoint, withIndex bool) *restoreReads {
	rd := &restoreReads{}
	rd.wg.Add(2)
	go func() {
		defer rd.wg.Done()
		if withIndex {
			if rd.rec, rd.recErr = s.safetyRecordOf(cp); rd.recErr != nil {
				return
			}
		}
		rd.target, rd.targetErr = s.objects.readTreeFiles(cp.Tree)
	}()
	go func() {
		defer rd.wg.Done()
		if withIndex {
			if rd.idx, rd.idxErr = s.projectIndex(); rd.idxErr == nil {
				rd.indexDone, rd.headErr = s.indexIsHead(rd.idx)
			}
			return
		}
		if head, err := s.projectHead(); err == nil && !head.IsZero() {
			_, _ = s.commitFiles(head)
		}
	}()
	return rd
}

// wait waits for the reads and returns the first error, the index's before the
// checkpoint's files' (the order of the reads when they ran one after the other);
// the errors of the safety record, read first, and of indexIsHead, read last, are
// left to the caller.
func (rd *restoreReads) wait() error {
	rd.wg.Wait()
	if rd.idxErr != nil {
		return rd.idxErr
	}
	return rd.targetErr
}

// walkHashed walks the working tree, its stat cache read meanwhile, and hashes the
// files that changed since the cache, storing no blob.
func (s *Store) walkHashed() (*snapshot, error) {
	cache := make(chan *statCache, 1)
	go func() { cache <- s.loadCache() }()
	cur, err := s.walk()
	c := <-cache
	if err != nil {
		return nil, err
	}
	cur.cache = c
	return cur, s.hashReadOnly(cur)
}

// preview is Preview of the checkpoint whose files are target, from cur, the walk
// of the working tree (hashed); idx is the project index when the caller has read
// it already; kept are the commits a keeping restore applies again.
func (s *Store) preview(cp Checkpoint, cur *snapshot, target map[string]treeFile, idx *index.Index, kept []KeptCommit) (*RestorePreview, error) {
	plan, err := s.planRestore(cur, target, cp)
	if err != nil {
		return nil, err
	}
	p := &RestorePreview{ProjectDir: s.projectDir, Checkpoint: cp.Short, Reason: cp.Reason}
	tracked, err := s.trackedFiles(idx)
	if err != nil {
		return nil, err
	}
	for _, group := range [][]treeFile{plan.write, plan.chmod} {
		for _, t := range group {
			if f, ok := cur.files[t.Path]; ok {
				p.addOverwrite(flagPath(t.Path, f.hash, tracked))
			} else {
				p.addCreate(PreviewPath{Path: t.Path})
			}
		}
	}
	for _, path := range plan.remove {
		p.addRemove(flagPath(path, cur.files[path].hash, tracked))
	}
	p.Overwrite, p.Remove, p.Create = trimmed(p.Overwrite), trimmed(p.Remove), trimmed(p.Create)
	if err := s.previewBranch(cp, p, kept); err != nil {
		return nil, err
	}
	p.AlreadyThere = p.OverwriteCount+p.RemoveCount+p.CreateCount == 0 && p.From == p.To
	p.Safety = "a pre-restore-safety checkpoint of the whole working tree (with the index), and the project HEAD kept as refs/replay/pre-restore/<session>"
	return p, nil
}

func (p *RestorePreview) addOverwrite(pp PreviewPath) {
	p.OverwriteCount++
	p.countRisk(pp)
	p.Overwrite = append(p.Overwrite, pp)
}

func (p *RestorePreview) addRemove(pp PreviewPath) {
	p.RemoveCount++
	p.countRisk(pp)
	p.Remove = append(p.Remove, pp)
}

func (p *RestorePreview) addCreate(pp PreviewPath) {
	p.CreateCount++
	p.Create = append(p.Create, pp)
}

func (p *RestorePreview) countRisk(pp PreviewPath) {
	if pp.Uncommitted || pp.Untracked {
		p.AtRisk++
	}
}

// sortPaths orders paths with work at risk first, then by name, so the listed ones
// are those that matter.
func sortPaths(list []PreviewPath) {
	sort.SliceStable(list, func(i, j int) bool {
		ri, rj := list[i].Uncommitted || list[i].Untracked, list[j].Uncommitted || list[j].Untracked
		if ri != rj {
			return ri
		}
		return list[i].Path < list[j].Path
	})
}

// trimmed sorts list (work at risk first) and returns its first PreviewListed entries.
func trimmed(list []PreviewPath) []PreviewPath {
	sortPaths(list)
	if len(list) > PreviewListed {
		return list[:PreviewListed]
	}
	return list
}

// hashReadOnly sets every file's hash from the stat cache or by reading the file,
// storing no blob.
func (s *Store) hashReadOnly(snap *snapshot) error {
	todo, _ := s.uncached(snap)
	return parallel(len(todo), func(i int) error { return s.readAndHash(todo[i], false) })
}

// trackedFiles maps the paths git knows (HEAD tree and index) to their HEAD blob;
// a path only in the index maps to the zero hash. Nil when the project is no
// repository. idx is the project index when the caller has read it already.
func (s *Store) trackedFiles(idx *index.Index) (map[string]plumbing.Hash, error) {
	pr, err := s.projectRepo()
	if err != nil || pr == nil {
		return nil, err
	}
	if idx == nil {
		idx, _ = s.readProjectIndex(pr)
	}
	out := map[string]plumbing.Hash{}
	if idx != nil {
		out = make(map[string]plumbing.Hash, len(idx.Entries))
		for _, e := range idx.Entries {
			out[e.Name] = plumbing.ZeroHash
		}
	}
	head, err := s.projectHead()
	if err != nil || head.IsZero() {
		return out, err
	}
	files, err := s.commitFiles(head)
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		if f.Mode.IsFile() {
			out[f.Path] = f.Hash
		}
	}
	return out, nil
}

// flagPath flags a file on disk by what git knows of it; tracked is nil outside a
// repository, where nothing can be flagged.
func flagPath(path string, onDisk plumbing.Hash, tracked map[string]plumbing.Hash) PreviewPath {
	pp := PreviewPath{Path: path}
	if tracked == nil {
		return pp
	}
	h, ok := tracked[path]
	switch {
	case !ok:
		pp.Untracked = true
	case h != onDisk:
		pp.Uncommitted = true
	}
	return pp
}

// previewBranch fills in the branch move: where HEAD is, where the restore puts it
// and the commits in between that the branch leaves behind, kept ones apart.
func (s *Store) previewBranch(cp Checkpoint, p *RestorePreview, kept []KeptCommit) error {
	pr, err := s.projectRepo()
	if err != nil || pr == nil {
		return err
	}
	if p.Branch, err = s.CurrentBranch(); err != nil {
		return err
	}
	head, err := s.projectHead()
	if err != nil {
		return err
	}
	target, err := s.ProjectHeadAt(cp)
	if err != nil {
		return err
	}
	if head.IsZero() || target.IsZero() {
		return nil // an unborn branch, or nothing to move to: the branch stays
	}
	if _, err := pr.CommitObject(target); err != nil {
		return nil // the project lost that commit: the restore leaves the branch (and warns)
	}
	p.From, p.To = head.String()[:8], target.String()[:8]
	if head == target {
		return nil
	}
	return s.movedPast(head, target, p, kept)
}

// movedPast lists the commits reachable from head but not from target, newest
// first; a kept commit (applied again on top: its copy is reachable from target)
// is listed in p.Kept instead.
func (s *Store) movedPast(head, target plumbing.Hash, p *RestorePreview, kept []KeptCommit) error {
	again := map[plumbing.Hash]plumbing.Hash{}
	for _, k := range kept {
		again[k.Old] = k.New
	}
	pr, _ := s.projectRepo()
	hc, err := pr.CommitObject(head)
	if err != nil {
		return fmt.Errorf("%s: reading HEAD %s: %w", s.projectDir, p.From, err)
	}
	tc, err := pr.CommitObject(target)
	if err != nil {
		return fmt.Errorf("%s: reading commit %s: %w", s.projectDir, p.To, err)
	}
	stop := map[plumbing.Hash]bool{}
	bases, err := hc.MergeBase(tc)
	if err != nil {
		return fmt.Errorf("%s: comparing HEAD %s with %s: %w", s.projectDir, p.From, p.To, err)
	}
	for _, b := range bases {
		stop[b.Hash] = true
	}
	seen := map[plumbing.Hash]bool{}
	iter := object.NewCommitPreorderIter(hc, seen, nil)
	err = iter.ForEach(func(c *object.Commit) error {
		if stop[c.Hash] {
			return storer.ErrStop
		}
		if copyHash, ok := again[c.Hash]; ok {
			p.KeptCount++
			if len(p.Kept) < PreviewListed {
				p.Kept = append(p.Kept, PreviewCommit{Short: c.Hash.String()[:8], Subject: firstLine(c.Message), Again: copyHash.String()[:8]})
			}
			return nil
		}
		p.MovedPastCount++
		if len(p.MovedPast) < PreviewListed {
			p.MovedPast = append(p.MovedPast, PreviewCommit{Short: c.Hash.String()[:8], Subject: firstLine(c.Message)})
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%s: reading the history from %s: %w", s.projectDir, p.From, err)
	}
	return nil
}

// Write prints the preview as plain lines; paths, subjects and names come from the
// project and are escaped so they cannot drive the terminal.
func (p *RestorePreview) Write(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Restore preview for %s (checkpoint %s, %s):\n", report.Safe(p.ProjectDir), p.Checkpoint, report.Safe(p.Reason))
	if p.AlreadyThere {
		b.WriteString("  nothing to do: the working tree and the branch already match the checkpoint\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	writePaths(&b, "overwrite", p.OverwriteCount, p.Overwrite)
	writePaths(&b, "remove", p.RemoveCount, p.Remove)
	writePaths(&b, "create", p.CreateCount, p.Create)
	if p.AtRisk > 0 {
		fmt.Fprintf(&b, "  ! %s with uncommitted or untracked work will be replaced (kept in the safety checkpoint)\n", report.Count(p.AtRisk, "file"))
	}
	switch {
	case p.From == "" || p.From == p.To:
		b.WriteString("  branch: stays where it is\n")
	default:
		fmt.Fprintf(&b, "  branch %s: moves from %s to %s", report.Safe(orDetached(p.Branch)), p.From, p.To)
		if p.MovedPastCount > 0 {
			fmt.Fprintf(&b, ", past %s:\n", report.Count(p.MovedPastCount, "commit"))
			for _, c := range p.MovedPast {
				fmt.Fprintf(&b, "      %s %s\n", c.Short, report.Safe(c.Subject))
			}
			if more := p.MovedPastCount - len(p.MovedPast); more > 0 {
				fmt.Fprintf(&b, "      … and %d more\n", more)
			}
		} else {
			b.WriteString("\n")
		}
		if p.KeptCount > 0 {
			fmt.Fprintf(&b, "    and keeps %s of another run, applied again on top of the checkpoint:\n", report.Count(p.KeptCount, "commit"))
			for _, c := range p.Kept {
				fmt.Fprintf(&b, "      %s %s (again as %s)\n", c.Short, report.Safe(c.Subject), c.Again)
			}
			if more := p.KeptCount - len(p.Kept); more > 0 {
				fmt.Fprintf(&b, "      … and %d more\n", more)
			}
		}
	}
	fmt.Fprintf(&b, "  first: %s;\n    the command that undoes the restore names it by its hash and is printed once it is taken\n", p.Safety)
	_, err := io.WriteString(w, b.String())
	return err
}

func writePaths(b *strings.Builder, verb string, n int, list []PreviewPath) {
	if n == 0 {
		fmt.Fprintf(b, "  %s: none\n", verb)
		return
	}
	fmt.Fprintf(b, "  %s: %s\n", verb, report.Count(n, "file"))
	for _, pp := range list {
		flag := ""
		switch {
		case pp.Untracked:
			flag = "  [untracked]"
		case pp.Uncommitted:
			flag = "  [uncommitted changes]"
		}
		fmt.Fprintf(b, "      %s%s\n", report.Safe(pp.Path), flag)
	}
	if more := n - len(list); more > 0 {
		fmt.Fprintf(b, "      … and %d more\n", more)
	}
}

func orDetached(b string) string {
	if b == "" {
		return "HEAD (detached)"
	}
	return b
}
