package checkpoint

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/replaytool/replay/internal/gitrepo"
)

// The safety checkpoint keeps the project's index the way `git stash` does: beside
// the working-tree commit it writes a second commit whose tree is the index, as the
// safety commit's second parent (the checkpoint log follows first parents only), and
// names it in a trailer. The same index commit goes into the project repository
// under refs/replay/index/<session>, so a `git gc` of the project keeps the staged
// blobs the restore leaves unreferenced.

// IndexTrailer is the trailer of a safety checkpoint naming its index commit.
const IndexTrailer = "Project-Index"

// BranchTrailer is the trailer of a safety checkpoint naming the ref HEAD pointed
// to (refs/heads/<branch>), or HEAD for a detached HEAD.
const BranchTrailer = "Project-Branch"

// indexRefPrefix is where the project keeps the index of every restore.
const indexRefPrefix = "refs/replay/index/"

// savedIndex is the index recorded for a safety checkpoint.
type savedIndex struct {
	commit plumbing.Hash // the shadow commit holding the index tree
	ref    string        // the project ref keeping it, empty when none was written
}

// safetyRecord is what a safety checkpoint records beyond the tree and project head.
type safetyRecord struct {
	branch string        // BranchTrailer value, empty when not recorded
	index  plumbing.Hash // the index commit, zero when not recorded
}

// UnmergedIndexError refuses a restore while the project index has unmerged entries
// (a merge, rebase or cherry-pick in progress), as `git stash` does.
type UnmergedIndexError struct{ Dir, Path string }

// Error names the first unmerged path and what to do.
func (e *UnmergedIndexError) Error() string {
	return fmt.Sprintf("%s: the index has unmerged entries (first: %s); finish or abort the merge (git merge --abort, git rebase --abort) and retry; nothing was changed", e.Dir, e.Path)
}

// Unwrap makes the error a refusal (ErrRefused).
func (e *UnmergedIndexError) Unwrap() error { return ErrRefused }

// BranchChangedError refuses to restore a safety checkpoint (an undo) while the
// project's HEAD is on another branch than when the checkpoint was taken.
type BranchChangedError struct {
	Checkpoint string
	Want, Have string
}

// Error names both branches and what to do.
func (e *BranchChangedError) Error() string {
	return fmt.Sprintf("checkpoint %s was taken with the project on %s but it is on %s now; switch back (git switch %s) and retry; nothing was changed",
		e.Checkpoint, refDisplay(e.Want), refDisplay(e.Have), strings.TrimPrefix(e.Want, "refs/heads/"))
}

// Unwrap makes the error a refusal (ErrRefused).
func (e *BranchChangedError) Unwrap() error { return ErrRefused }

func refDisplay(ref string) string {
	if ref == "HEAD" || ref == "" {
		return "a detached HEAD"
	}
	return "branch " + strings.TrimPrefix(ref, "refs/heads/")
}

// headRef returns what the project's HEAD points to: refs/heads/<branch>, HEAD when
// detached, empty when the project is not a repository.
func (s *Store) headRef() (string, error) {
	pr, err := s.projectRepo()
	if err != nil || pr == nil {
		return "", err
	}
	ref, err := pr.Storer.Reference(plumbing.HEAD)
	if err != nil {
		return "", fmt.Errorf("%s: reading the project HEAD: %w", s.projectDir, err)
	}
	if ref.Type() == plumbing.SymbolicReference {
		return ref.Target().String(), nil
	}
	return "HEAD", nil
}

// projectIndex reads the project index; nil when the project is not a repository.
// Unmerged entries are refused.
func (s *Store) projectIndex() (*index.Index, error) {
	pr, err := s.projectRepo()
	if err != nil || pr == nil {
		return nil, err
	}
	idx, err := s.readProjectIndex(pr)
	if err != nil {
		return nil, fmt.Errorf("%s: reading the project index: %w; repair it (git reset) and retry", s.projectDir, err)
	}
	for _, e := range idx.Entries {
		if e.Stage != 0 { // go-git's index.Merged constant is 1, the ancestor stage
			return nil, &UnmergedIndexError{Dir: s.projectDir, Path: e.Name}
		}
	}
	return idx, nil
}

// readProjectIndex reads the index of the project repository pr: decoded by
// gitrepo.ReadIndex from the project's .git directory (go-git's result, several
// times faster), through go-git otherwise (a linked worktree).
func (s *Store) readProjectIndex(pr *git.Repository) (*index.Index, error) {
	if gd := gitrepo.GitDir(s.projectDir); gd != "" {
		return gitrepo.ReadIndex(gd)
	}
	return pr.Storer.Index()
}

// projectObjects returns the project's object store, nil when the project has no
// .git directory of its own (a linked worktree) or is not a repository. While
// keepProjectObjects holds it, every call returns the same store, whose pack
// indexes are read once and packs kept open; otherwise each call makes a new one.
func (s *Store) projectObjects() *objectStore {
	o := s.objects
	o.peerMu.Lock()
	defer o.peerMu.Unlock()
	if o.peerHolds > 0 && o.peerMade {
		return o.peer
	}
	proj := s.newProjectObjects()
	if o.peerHolds > 0 {
		o.peer, o.peerMade = proj, true
		if proj != nil {
			o.peerRelease = proj.keepPacksOpen()
		}
	}
	return proj
}

// keepProjectObjects makes projectObjects return one store for the project until
// release is called (calls nest; release is idempotent): a restore reads the
// project's trees, blobs and pack indexes more than once.
func (s *Store) keepProjectObjects() (release func()) {
	o := s.objects
	o.peerMu.Lock()
	o.peerHolds++
	o.peerMu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			o.peerMu.Lock()
			defer o.peerMu.Unlock()
			if o.peerHolds--; o.peerHolds > 0 {
				return
			}
			if o.peerRelease != nil {
				o.peerRelease()
			}
			o.peer, o.peerMade, o.peerRelease = nil, false, nil
		})
	}
}

// newProjectObjects makes a store for the project's objects; see projectObjects.
func (s *Store) newProjectObjects() *objectStore {
	pr, err := s.projectRepo()
	if err != nil || pr == nil {
		return nil
	}
	gd := gitrepo.GitDir(s.projectDir)
	if gd == "" {
		return nil
	}
	// Its own storage, reading large packed blobs as they are used, like the shadow's.
	return newObjectStore(gd, newStorage(gd))
}

// saveIndex records idx for the safety checkpoint: its blobs are copied into the
// shadow repository, its tree is written there as a commit, and the same commit is
// written into the project and kept by refs/replay/index/<session>. Entries whose
// blob neither repository has are left out with a warning.
func (s *Store) saveIndex(idx *index.Index, before *snapshot, session string, when time.Time, warn func(string, ...any)) (*savedIndex, error) {
	proj := s.projectObjects()
	files := make([]treeFile, 0, len(idx.Entries))
	for _, e := range idx.Entries {
		files = append(files, treeFile{Path: e.Name, Mode: e.Mode, Hash: e.Hash})
	}
	missing := make([]bool, len(files))
	err := parallel(len(files), func(i int) error {
		f := files[i]
		if w, ok := before.files[f.Path]; ok && w.hash == f.Hash {
			return nil // the safety checkpoint has just stored this blob
		}
		if f.Mode == filemode.Submodule || s.objects.has(f.Hash) {
			return nil
		}
		if proj == nil || !proj.has(f.Hash) {
			missing[i] = true
			return nil
		}
		return s.objects.copyObject(proj, f.Hash)
	})
	if err != nil {
		return nil, fmt.Errorf("saving the project index: %w", err)
	}
	kept := files[:0]
	for i, f := range files {
		if missing[i] {
			warn("the index entry %s names blob %s, which the project repository does not have; it is left out of the saved index", f.Path, f.Hash.String()[:8])
			continue
		}
		kept = append(kept, f)
	}
	tree, err := s.objects.buildTree(kept)
	if err != nil {
		return nil, fmt.Errorf("saving the project index: %w", err)
	}
	sig := object.Signature{Name: "replay", Email: "replay@localhost", When: when}
	c := &object.Commit{Author: sig, Committer: sig, TreeHash: tree,
		Message: fmt.Sprintf("index before restore %s\n", session)}
	data, err := encodeCommit(c)
	if err != nil {
		return nil, err
	}
	saved := &savedIndex{}
	if saved.commit, err = s.objects.write(plumbing.CommitObject, data); err != nil {
		return nil, err
	}
	if proj == nil {
		return saved, nil
	}
	// In the project the index commit sits on HEAD, like the index commit of a
	// stash: diffing it with its parent shows the staged changes. The shadow
	// repository does not hold the project's history, so its copy has no parent.
	head, err := s.projectHead()
	if err != nil {
		return nil, err
	}
	if !head.IsZero() {
		c.ParentHashes = []plumbing.Hash{head}
	}
	if data, err = encodeCommit(c); err != nil {
		return nil, err
	}
	return saved, s.keepIndexInProject(proj, kept, data, session, saved)
}

// keepIndexInProject writes the index commit (data) and its trees into the project
// repository and points a new refs/replay/index/<session> ref at it.
func (s *Store) keepIndexInProject(proj *objectStore, files []treeFile, data []byte, session string, saved *savedIndex) error {
	if _, err := proj.buildTree(files); err != nil {
		return fmt.Errorf("%s: keeping the index in the project repository: %w", s.projectDir, err)
	}
	h, err := proj.write(plumbing.CommitObject, data)
	if err != nil {
		return fmt.Errorf("%s: keeping the index in the project repository: %w", s.projectDir, err)
	}
	if err := proj.syncLoose(); err != nil {
		return fmt.Errorf("%s: keeping the index in the project repository: %w", s.projectDir, err)
	}
	pr, _ := s.projectRepo()
	name, err := freeRefName(pr.Storer, indexRefPrefix, session)
	if err != nil {
		return err
	}
	if err := setRef(s.projectDir, pr.Storer, name, h); err != nil {
		return fmt.Errorf("%s: writing %s: %w", s.projectDir, name, err)
	}
	saved.ref = name.String()
	return nil
}

// safetyRecordOf reads the branch and index trailers of checkpoint cp. An index
// trailer that does not name one of the commit's parents is ignored.
func (s *Store) safetyRecordOf(cp Checkpoint) (safetyRecord, error) {
	c, err := s.shadowCommit(cp.Hash)
	if err != nil {
		return safetyRecord{}, fmt.Errorf("%s: reading checkpoint %s: %w", s.shadowDir, cp.Short, err)
	}
	return parseSafetyRecord(c.Message, c.ParentHashes), nil
}

// shadowCommit reads the shadow commit h through the object store, whose pack
// indexes a restore loads anyway, instead of go-git's storage, which would load
// every pack index of the shadow a second time for one commit.
func (s *Store) shadowCommit(h plumbing.Hash) (*object.Commit, error) {
	data, err := s.commitData(h)
	if err != nil {
		return nil, err
	}
	return decodeCommit(data)
}

// listedCommit is shadowCommit for the listing, which needs only the tree, the
// parents, the committer time and the message: a commit of the plain shape is
// parsed by gitrepo.ParseCommit, any other decoded by go-git.
func (s *Store) listedCommit(h plumbing.Hash) (*object.Commit, error) {
	data, err := s.commitData(h)
	if err != nil {
		return nil, err
	}
	if c := gitrepo.ParseCommit(h, data); c != nil {
		return &object.Commit{Hash: c.Hash, TreeHash: c.Tree, ParentHashes: c.Parents, Committer: object.Signature{When: c.When}, Message: c.Message}, nil
	}
	return decodeCommit(data)
}

// commitData reads commit h through the store's objects.
func (s *Store) commitData(h plumbing.Hash) ([]byte, error) {
	t, data, err := s.objects.read(h)
	if err != nil {
		return nil, err
	}
	if t != plumbing.CommitObject {
		return nil, fmt.Errorf("object %s is a %s, not a commit: %w", h, t, plumbing.ErrObjectNotFound)
	}
	return data, nil
}

// decodeCommit decodes a commit's content with go-git.
func decodeCommit(data []byte) (*object.Commit, error) {
	obj := &plumbing.MemoryObject{}
	obj.SetType(plumbing.CommitObject)
	if _, err := obj.Write(data); err != nil {
		return nil, err
	}
	c := &object.Commit{}
	if err := c.Decode(obj); err != nil {
		return nil, err
	}
	return c, nil
}

// parseSafetyRecord reads the branch and index trailers of a checkpoint message; an
// index trailer counts only when it names one of parents after the first.
func parseSafetyRecord(message string, parents []plumbing.Hash) safetyRecord {
	var rec safetyRecord
	_, body, _ := strings.Cut(message, "\n")
	for _, line := range strings.Split(body, "\n") {
		k, v, found := strings.Cut(line, ":")
		if !found {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch {
		case strings.EqualFold(k, BranchTrailer) && (v == "HEAD" || (plumbing.ReferenceName(v).IsBranch() && plumbing.ReferenceName(v).Validate() == nil)):
			rec.branch = v
		case strings.EqualFold(k, IndexTrailer) && plumbing.IsHash(v):
			h := plumbing.NewHash(v)
			for _, p := range parents[min(1, len(parents)):] {
				if p == h {
					rec.index = h
				}
			}
		}
	}
	return rec
}

// checkSafetyBranch refuses to restore a checkpoint that records a branch other than
// the one the project's HEAD is on now.
func (s *Store) checkSafetyBranch(cp Checkpoint, rec safetyRecord) error {
	if rec.branch == "" {
		return nil
	}
	have, err := s.headRef()
	if err != nil || have == "" {
		return err
	}
	if have != rec.branch {
		return &BranchChangedError{Checkpoint: cp.Short, Want: rec.branch, Have: have}
	}
	return nil
}

// savedIndexEntries reads the index recorded in the shadow commit h as index entries
// sorted by name, copying every blob the project repository lacks back into it, and
// fills in stat data for the files whose working copy matches.
func (s *Store) savedIndexEntries(h plumbing.Hash, after *snapshot) ([]*index.Entry, error) {
	c, err := s.shadowCommit(h)
	if err != nil {
		return nil, fmt.Errorf("%s: reading the saved index %s: %w", s.shadowDir, h.String()[:8], err)
	}
	files, err := s.objects.readTreeEntries(c.TreeHash)
	if err != nil {
		return nil, err
	}
	proj := s.projectObjects()
	list := make([]treeFile, 0, len(files))
	for _, f := range files {
		list = append(list, f)
	}
	if proj != nil {
		err := parallel(len(list), func(i int) error {
			if list[i].Mode == filemode.Submodule {
				return nil
			}
			return proj.copyObject(s.objects, list[i].Hash)
		})
		if err == nil {
			err = proj.syncLoose() // before the index that names them is written
		}
		if err != nil {
			return nil, fmt.Errorf("%s: bringing the saved index's blobs back: %w", s.projectDir, err)
		}
	}
	entries := make([]*index.Entry, 0, len(list))
	for _, f := range list {
		entries = append(entries, statEntry(f.Path, f.Hash, f.Mode, after))
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name < entries[j].Name })
	return entries, nil
}

// statEntry is the index entry for path with blob h, with the stat data of the
// working copy when it has that content (so git sees it unchanged without hashing).
func statEntry(path string, h plumbing.Hash, mode filemode.FileMode, after *snapshot) *index.Entry {
	e := &index.Entry{Name: path, Hash: h, Mode: mode}
	if f, ok := after.files[path]; ok && f.hash == h && f.mode == mode {
		e.Size = uint32(f.size)
		e.ModifiedAt = time.Unix(0, f.mtime)
		e.CreatedAt = f.extra.ctime
		e.Dev, e.Inode, e.UID, e.GID = f.extra.dev, f.extra.ino, f.extra.uid, f.extra.gid
	}
	return e
}

// freeRefName returns prefix+session, or prefix+session-N for the first N from 2
// that names no ref yet: a ref of an earlier restore is never overwritten.
func freeRefName(st interface {
	Reference(plumbing.ReferenceName) (*plumbing.Reference, error)
}, prefix, session string) (plumbing.ReferenceName, error) {
	name := plumbing.ReferenceName(prefix + session)
	if err := name.Validate(); err != nil {
		return "", fmt.Errorf("session %q makes a bad ref name: %w", session, err)
	}
	for n := 2; ; n++ {
		_, err := st.Reference(name)
		if errors.Is(err, plumbing.ErrReferenceNotFound) {
			return name, nil
		}
		if err != nil {
			return "", fmt.Errorf("reading %s: %w", name, err)
		}
		name = plumbing.ReferenceName(fmt.Sprintf("%s%s-%d", prefix, session, n))
	}
}

// writeProjectIndex writes the project index: under git's lock protocol into the
// project's .git directory, through go-git otherwise.
func (s *Store) writeProjectIndex(idx *index.Index) error {
	pr, err := s.projectRepo()
	if err != nil || pr == nil {
		return err
	}
	if gd := gitrepo.GitDir(s.projectDir); gd != "" {
		err = gitrepo.WriteIndex(gd, idx)
	} else {
		err = pr.Storer.SetIndex(idx)
	}
	if err != nil {
		return fmt.Errorf("%s: writing the project index: %w", s.projectDir, err)
	}
	return nil
}
