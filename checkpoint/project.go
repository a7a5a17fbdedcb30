package checkpoint

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/replaytool/replay/internal/gitrepo"
)

// moveProject moves the project branch (or a detached HEAD) to the commit the
// checkpoint was taken on and rewrites the index to that commit's tree, with stat
// data for every file whose working copy matches it (like `git reset --mixed`).
func (s *Store) moveProject(cp Checkpoint, after *snapshot, rep *RestoreReport, warn func(string, ...any)) error {
	pr, err := s.projectRepo()
	if err != nil {
		return err
	}
	if pr == nil {
		return nil
	}
	target, err := s.ProjectHeadAt(cp)
	if err != nil {
		return err
	}
	if target.IsZero() {
		warn("checkpoint %s names no project commit and none is older than it; the project branch was left where it is", cp.Short)
		return nil
	}
	commit, err := pr.CommitObject(target)
	if err != nil {
		warn("checkpoint %s was taken on project commit %s, which the project no longer has; the project branch was left where it is", cp.Short, target.String()[:8])
		return nil
	}
	head, err := pr.Storer.Reference(plumbing.HEAD)
	if err != nil {
		return fmt.Errorf("%s: reading the project HEAD: %w", s.projectDir, err)
	}
	name := plumbing.HEAD
	if head.Type() == plumbing.SymbolicReference {
		name = head.Target()
	}
	if err := setRef(s.projectDir, pr.Storer, name, target); err != nil {
		return fmt.Errorf("%s: moving %s to %s: %w", s.projectDir, name, target.String()[:8], err)
	}
	rep.ProjectHead = target
	idx, err := indexFor(commit, after)
	if err != nil {
		return fmt.Errorf("%s: building the index for %s: %w", s.projectDir, target.String()[:8], err)
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

// setRef points ref name of the repository in dir (a .git directory inside it, or dir
// itself for a bare one) at h: atomically with a rename where the ref is a loose
// file replay can write, through go-git otherwise (a detached HEAD).
func setRef(dir string, st storer.ReferenceStorer, name plumbing.ReferenceName, h plumbing.Hash) error {
	gd := gitrepo.GitDir(dir)
	if gd == "" {
		if _, err := os.Stat(filepath.Join(dir, "HEAD")); err == nil {
			gd = dir
		}
	}
	if gd != "" && (name.IsBranch() || strings.HasPrefix(name.String(), "refs/replay/")) {
		return gitrepo.WriteRef(gd, name, h)
	}
	return st.SetReference(plumbing.NewHashReference(name, h))
}

func indexFor(commit *object.Commit, after *snapshot) (*index.Index, error) {
	tree, err := commit.Tree()
	if err != nil {
		return nil, err
	}
	idx := &index.Index{Version: 2}
	walker := object.NewTreeWalker(tree, true, nil)
	defer walker.Close()
	for {
		name, entry, err := walker.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if entry.Mode == filemode.Dir {
			continue
		}
		e := &index.Entry{Name: name, Hash: entry.Hash, Mode: entry.Mode}
		if f, ok := after.files[name]; ok && f.hash == entry.Hash && f.mode == entry.Mode {
			e.Size = uint32(f.size)
			e.ModifiedAt = time.Unix(0, f.mtime)
			e.CreatedAt = f.extra.ctime
			e.Dev, e.Inode, e.UID, e.GID = f.extra.dev, f.extra.ino, f.extra.uid, f.extra.gid
		}
		idx.Entries = append(idx.Entries, e)
	}
	return idx, nil
}
