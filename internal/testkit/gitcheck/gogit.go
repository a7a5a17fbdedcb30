package gitcheck

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// goGit is the repository as go-git sees it.
type goGit struct {
	repo *git.Repository
}

func openGoGit(dir string) (goGit, error) {
	repo, err := git.PlainOpen(dir)
	if err != nil {
		return goGit{}, fmt.Errorf("go-git cannot open %s: %w", dir, err)
	}
	return goGit{repo: repo}, nil
}

// refs lists the refs as Checker.refs does: refs under refs/ resolved to an id,
// HEAD as its target and its id.
func (g goGit) refs() []string {
	var out []string
	iter, err := g.repo.Storer.IterReferences()
	if err != nil {
		return []string{"go-git cannot list refs: " + err.Error()}
	}
	_ = iter.ForEach(func(r *plumbing.Reference) error {
		name := r.Name()
		if name == plumbing.HEAD {
			return nil
		}
		if resolved, err := storer.ResolveReference(g.repo.Storer, name); err == nil {
			out = append(out, fmt.Sprintf("%s %s", name, resolved.Hash()))
		}
		return nil
	})
	if head, err := g.repo.Storer.Reference(plumbing.HEAD); err == nil && head.Type() == plumbing.SymbolicReference {
		out = append(out, "HEAD -> "+head.Target().String())
	}
	if head, err := storer.ResolveReference(g.repo.Storer, plumbing.HEAD); err == nil {
		if id, err := g.peel(head.Hash()); err == nil {
			out = append(out, "HEAD "+id.String())
		}
	}
	return out
}

// peel follows annotated tags from h to the object they name.
func (g goGit) peel(h plumbing.Hash) (plumbing.Hash, error) {
	for range 100 {
		obj, err := g.repo.Storer.EncodedObject(plumbing.AnyObject, h)
		if err != nil {
			return h, err
		}
		if obj.Type() != plumbing.TagObject {
			return h, nil
		}
		tag, err := object.DecodeTag(g.repo.Storer, obj)
		if err != nil {
			return h, err
		}
		h = tag.Target
	}
	return h, fmt.Errorf("tag chain at %s too long", h)
}

// commits walks every commit reachable from the refs (HEAD included, tags
// peeled) and lists each as "id tree".
func (g goGit) commits() ([]string, error) {
	var starts []plumbing.Hash
	iter, err := g.repo.Storer.IterReferences()
	if err != nil {
		return nil, err
	}
	err = iter.ForEach(func(r *plumbing.Reference) error {
		resolved, err := storer.ResolveReference(g.repo.Storer, r.Name())
		if err != nil {
			return nil // an unborn HEAD or a dangling symbolic ref names no commit
		}
		id, err := g.peel(resolved.Hash())
		if err != nil {
			return fmt.Errorf("go-git reads %s: %w", r.Name(), err)
		}
		starts = append(starts, id)
		return nil
	})
	if err != nil {
		return nil, err
	}
	seen := map[plumbing.Hash]bool{}
	var out []string
	for len(starts) > 0 {
		h := starts[len(starts)-1]
		starts = starts[:len(starts)-1]
		if seen[h] {
			continue
		}
		seen[h] = true
		c, err := object.GetCommit(g.repo.Storer, h)
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			return nil, fmt.Errorf("go-git: commit %s not found", h)
		}
		if err != nil {
			if obj, oerr := g.repo.Storer.EncodedObject(plumbing.AnyObject, h); oerr == nil && obj.Type() != plumbing.CommitObject {
				continue // a ref to a tree or blob starts no walk
			}
			return nil, fmt.Errorf("go-git reads commit %s: %w", h, err)
		}
		out = append(out, fmt.Sprintf("%s %s", c.Hash, c.TreeHash))
		starts = append(starts, c.ParentHashes...)
	}
	return out, nil
}

// tree lists the entries of a tree as "mode type id\tname", a subtree as
// type tree, a submodule as type commit.
func (g goGit) tree(id string) ([]string, error) {
	t, err := object.GetTree(g.repo.Storer, plumbing.NewHash(id))
	if err != nil {
		return nil, fmt.Errorf("go-git reads tree %s: %w", id, err)
	}
	out := make([]string, 0, len(t.Entries))
	for _, e := range t.Entries {
		typ := "blob"
		switch e.Mode {
		case filemode.Dir:
			typ = "tree"
		case filemode.Submodule:
			typ = "commit"
		}
		out = append(out, fmt.Sprintf("%06o %s %s\t%s", uint32(e.Mode), typ, e.Hash, e.Name))
	}
	return out, nil
}

// objects lists every object go-git's storage holds as "id type size".
func (g goGit) objects() ([]string, error) {
	iter, err := g.repo.Storer.IterEncodedObjects(plumbing.AnyObject)
	if err != nil {
		return nil, fmt.Errorf("go-git lists objects: %w", err)
	}
	seen := map[plumbing.Hash]bool{}
	var out []string
	err = iter.ForEach(func(o plumbing.EncodedObject) error {
		if !seen[o.Hash()] {
			seen[o.Hash()] = true
			out = append(out, fmt.Sprintf("%s %s %d", o.Hash(), o.Type(), o.Size()))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("go-git lists objects: %w", err)
	}
	return out, nil
}

// goGitIndex lists the entries of the index file at path as git ls-files
// --stage -t prints them: "tag mode id stage\tname", the tag M for an unmerged
// entry, S for a skip-worktree one, H otherwise.
func goGitIndex(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	idx := &index.Index{}
	if err := index.NewDecoder(f).Decode(idx); err != nil {
		return nil, fmt.Errorf("go-git cannot decode the index %s: %w", filepath.Base(path), err)
	}
	out := make([]string, 0, len(idx.Entries))
	for _, e := range idx.Entries {
		tag := "H"
		switch {
		case e.Stage != 0: // go-git decodes a merged entry's stage as 0, not as its index.Merged
			tag = "M"
		case e.SkipWorktree:
			tag = "S"
		}
		out = append(out, fmt.Sprintf("%s %06o %s %d\t%s", tag, uint32(e.Mode), e.Hash, e.Stage, e.Name))
	}
	return out, nil
}
