package checkpoint

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/replaytool/replay/internal/gitrepo"
)

// moveProject moves the project branch (or a detached HEAD) to the commit the
// checkpoint was taken on and rewrites the index: to the index the checkpoint saved
// when it is a safety checkpoint, otherwise to that commit's tree (like
// `git reset --mixed`), with stat data for every file whose working copy matches.
func (s *Store) moveProject(cp Checkpoint, rec safetyRecord, after *snapshot, rep *RestoreReport, warn func(string, ...any)) error {
	pr, err := s.projectRepo()
	if err != nil || pr == nil {
		return err
	}
	target := cp.ProjectHead
	if rec.index.IsZero() || !target.IsZero() {
		// A safety checkpoint without a head was taken on an unborn branch: nothing to move.
		if target, err = s.ProjectHeadAt(cp); err != nil {
			return err
		}
	}
	var commit *object.Commit
	switch {
	case target.IsZero() && rec.index.IsZero():
		warn("checkpoint %s names no project commit and none is older than it; the project branch was left where it is", cp.Short)
		return nil
	case target.IsZero():
	default:
		if commit, err = pr.CommitObject(target); err != nil {
			warn("checkpoint %s was taken on project commit %s, which the project no longer has; the project branch was left where it is", cp.Short, target.String()[:8])
			if rec.index.IsZero() {
				return nil
			}
		} else if err := s.moveHead(pr.Storer, target, rep); err != nil {
			return err
		}
	}
	var entries []*index.Entry
	if !rec.index.IsZero() {
		entries, err = s.savedIndexEntries(rec.index, after)
	} else {
		var files []treeFile
		if files, err = s.commitFiles(commit.Hash); err == nil {
			entries = indexFor(files, after)
		}
	}
	if err != nil {
		return fmt.Errorf("%s: building the index: %w", s.projectDir, err)
	}
	return s.writeProjectIndex(&index.Index{Version: 2, Entries: entries})
}

// moveHead points the ref HEAD names (or a detached HEAD) at target.
func (s *Store) moveHead(st storer.ReferenceStorer, target plumbing.Hash, rep *RestoreReport) error {
	head, err := st.Reference(plumbing.HEAD)
	if err != nil {
		return fmt.Errorf("%s: reading the project HEAD: %w", s.projectDir, err)
	}
	name := plumbing.HEAD
	if head.Type() == plumbing.SymbolicReference {
		name = head.Target()
	}
	if err := setRef(s.projectDir, st, name, target); err != nil {
		return fmt.Errorf("%s: moving %s to %s: %w", s.projectDir, name, target.String()[:8], err)
	}
	rep.ProjectHead = target
	return nil
}

// setRef points ref name of the repository in dir (a .git directory inside it, or dir
// itself for a bare one) at h: under git's lock protocol where it is a branch, a
// detached HEAD or a refs/replay/ ref, through go-git otherwise.
func setRef(dir string, st storer.ReferenceStorer, name plumbing.ReferenceName, h plumbing.Hash) error {
	gd := gitrepo.GitDir(dir)
	if gd == "" {
		if _, err := os.Stat(filepath.Join(dir, "HEAD")); err == nil {
			gd = dir
		}
	}
	if gd != "" && (name == plumbing.HEAD || name.IsBranch() || strings.HasPrefix(name.String(), "refs/replay/")) {
		return gitrepo.WriteRef(gd, name, h)
	}
	return st.SetReference(plumbing.NewHashReference(name, h))
}

// indexFor returns the index entries of a commit's files (sorted by path).
func indexFor(files []treeFile, after *snapshot) []*index.Entry {
	entries := make([]*index.Entry, 0, len(files))
	for _, f := range files {
		entries = append(entries, statEntry(f.Path, f.Hash, f.Mode, after))
	}
	return entries
}

// commitFiles returns every non-directory entry of the tree of project commit h,
// sorted by path. The last answer is kept: a restore asks for HEAD's tree up to
// three times (the preview, the index check and the new index).
func (s *Store) commitFiles(h plumbing.Hash) ([]treeFile, error) {
	s.treeMu.Lock()
	defer s.treeMu.Unlock()
	if s.treeFilesOf == h && s.treeFiles != nil {
		return s.treeFiles, nil
	}
	pr, err := s.projectRepo()
	if err != nil || pr == nil {
		return nil, err
	}
	commit, err := pr.CommitObject(h)
	if err != nil {
		return nil, fmt.Errorf("%s: reading the project commit %s: %w", s.projectDir, h.String()[:8], err)
	}
	var files []treeFile
	// The shadow's tree reader reads the subtrees in parallel and decodes no more
	// than it needs; go-git's walker reads what it refuses (a name it deems unsafe).
	if proj := s.projectObjects(); proj != nil {
		release := proj.keepPacksOpen()
		m, err := proj.readTreeEntries(commit.TreeHash)
		release()
		if err == nil {
			files = make([]treeFile, 0, len(m))
			for _, f := range m {
				files = append(files, f)
			}
			sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
		}
	}
	if files == nil {
		if files, err = walkCommitTree(commit); err != nil {
			return nil, fmt.Errorf("%s: reading the tree of commit %s: %w", s.projectDir, h.String()[:8], err)
		}
	}
	s.treeFilesOf, s.treeFiles = h, files
	return files, nil
}

// walkCommitTree lists the non-directory entries of commit's tree with go-git's
// walker, in path order.
func walkCommitTree(commit *object.Commit) ([]treeFile, error) {
	tree, err := commit.Tree()
	if err != nil {
		return nil, err
	}
	files := []treeFile{}
	walker := object.NewTreeWalker(tree, true, nil)
	defer walker.Close()
	for {
		name, entry, err := walker.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return nil, err
		}
		if entry.Mode != filemode.Dir {
			files = append(files, treeFile{Path: name, Mode: entry.Mode, Hash: entry.Hash})
		}
	}
}

// indexIsHead reports whether the project index holds exactly the tree of the
// project's HEAD commit (paths, modes and blobs): what a restore that leaves HEAD
// where it is would write. A restore killed before it rewrote the index leaves a
// tree and HEAD that already match while the index does not.
func (s *Store) indexIsHead(idx *index.Index) (bool, error) {
	pr, err := s.projectRepo()
	if err != nil || pr == nil || idx == nil {
		return true, err
	}
	head, err := pr.Head()
	if err != nil {
		return len(idx.Entries) == 0, nil // an unborn branch: its index is empty
	}
	files, err := s.commitFiles(head.Hash())
	if err != nil {
		return false, err
	}
	want := indexFor(files, &snapshot{})
	if len(want) != len(idx.Entries) {
		return false, nil
	}
	have := make(map[string]*index.Entry, len(idx.Entries))
	for _, e := range idx.Entries {
		have[e.Name] = e
	}
	for _, w := range want {
		if h, ok := have[w.Name]; !ok || h.Hash != w.Hash || h.Mode != w.Mode {
			return false, nil
		}
	}
	return true, nil
}
