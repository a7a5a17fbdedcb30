package agent

import (
	"encoding/base64"
	"fmt"
	"io"
	"path/filepath"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/replaytool/replay/internal/gitrepo"
)

// EffectObject is one git object kept with a recording: its hash, type (commit,
// tree or blob) and content in base64.
type EffectObject struct {
	Hash string `json:"hash"`
	Type string `json:"type"`
	Data string `json:"data"`
}

// keepEffects keeps the commits between before and after under
// refs/replay/effects/<key> in the worktree's repository (the project's own for a
// dispatch run in the project, repo, opened after the dispatch ran) and returns
// the objects they brought.
func keepEffects(repo *git.Repository, workDir, key, before, after string) ([]EffectObject, error) {
	ref := plumbing.NewHashReference(plumbing.ReferenceName(EffectsRefPrefix+key), plumbing.NewHash(after))
	if err := repo.Storer.SetReference(ref); err != nil {
		return nil, fmt.Errorf("%s: cannot keep the dispatch's commits under %s: %w", workDir, ref.Name(), err)
	}
	chain, err := recordedChain(repo.Storer, &Effects{HeadBefore: before, HeadAfter: after})
	if err != nil {
		return nil, err
	}
	var out []EffectObject
	seen := map[plumbing.Hash]bool{}
	for _, c := range chain {
		var old *object.Tree
		if c.NumParents() > 0 {
			p, err := c.Parent(0)
			if err != nil {
				return nil, fmt.Errorf("commit %s: %w", c.Hash, err)
			}
			if old, err = p.Tree(); err != nil {
				return nil, fmt.Errorf("commit %s: %w", p.Hash, err)
			}
		}
		tree, err := c.Tree()
		if err != nil {
			return nil, fmt.Errorf("commit %s: %w", c.Hash, err)
		}
		if out, err = newObjects(repo, tree, old, seen, out); err != nil {
			return nil, err
		}
		if out, err = appendObject(repo, c.Hash, seen, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// newObjects appends tree and what it holds that old (the parent's tree at the same
// path, nil when none) did not have.
func newObjects(repo *git.Repository, tree, old *object.Tree, seen map[plumbing.Hash]bool, out []EffectObject) ([]EffectObject, error) {
	var err error
	if out, err = appendObject(repo, tree.Hash, seen, out); err != nil {
		return nil, err
	}
	for _, e := range tree.Entries {
		var was *object.TreeEntry
		if old != nil {
			was, _ = old.FindEntry(e.Name)
		}
		if (was != nil && was.Hash == e.Hash) || e.Mode == filemode.Submodule {
			continue
		}
		if e.Mode != filemode.Dir {
			if out, err = appendObject(repo, e.Hash, seen, out); err != nil {
				return nil, err
			}
			continue
		}
		sub, err := repo.TreeObject(e.Hash)
		if err != nil {
			return nil, fmt.Errorf("tree %s: %w", e.Hash, err)
		}
		var oldSub *object.Tree
		if was != nil && was.Mode == filemode.Dir {
			oldSub, _ = repo.TreeObject(was.Hash)
		}
		if out, err = newObjects(repo, sub, oldSub, seen, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func appendObject(repo *git.Repository, h plumbing.Hash, seen map[plumbing.Hash]bool, out []EffectObject) ([]EffectObject, error) {
	if seen[h] {
		return out, nil
	}
	seen[h] = true
	obj, err := repo.Storer.EncodedObject(plumbing.AnyObject, h)
	if err != nil {
		return nil, fmt.Errorf("object %s: %w", h, err)
	}
	r, err := obj.Reader()
	if err != nil {
		return nil, fmt.Errorf("object %s: %w", h, err)
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("object %s: %w", h, err)
	}
	return append(out, EffectObject{Hash: h.String(), Type: obj.Type().String(), Data: base64.StdEncoding.EncodeToString(data)}), nil
}

// storeObjectsInto writes the recorded objects the repository lacks, checking that
// each hashes to its recorded hash, and adds them all decoded to out, by hash, so
// that the re-application reads them from memory.
func storeObjectsInto(repo *git.Repository, objs []EffectObject, out map[plumbing.Hash]plumbing.EncodedObject) (map[plumbing.Hash]plumbing.EncodedObject, error) {
	loose := looseWriter(repo)
	for i, o := range objs {
		h := plumbing.NewHash(o.Hash)
		typ, err := plumbing.ParseObjectType(o.Type)
		if err != nil || (typ != plumbing.CommitObject && typ != plumbing.TreeObject && typ != plumbing.BlobObject) {
			return nil, fmt.Errorf("field effects.objects[%d].type: %q is not commit, tree or blob", i, o.Type)
		}
		data, err := base64.StdEncoding.DecodeString(o.Data)
		if err != nil {
			return nil, fmt.Errorf("field effects.objects[%d].data: %w", i, err)
		}
		if got := plumbing.ComputeHash(typ, data); got != h {
			return nil, fmt.Errorf("field effects.objects[%d]: the content hashes to %s, not %s", i, got, o.Hash)
		}
		mem := &plumbing.MemoryObject{}
		mem.SetType(typ)
		if _, err := mem.Write(data); err != nil {
			return nil, err
		}
		out[h] = mem
		if repo.Storer.HasEncodedObject(h) == nil {
			continue
		}
		if err := writeObject(repo, loose, typ, data, h); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// looseWriter returns the lean writer of loose objects into the repository's own
// .git/objects, or nil when its storage is laid out otherwise (a linked worktree,
// a bare repository): go-git then writes.
func looseWriter(repo *git.Repository) *gitrepo.LooseObjects {
	wt, err := repo.Worktree()
	if err != nil {
		return nil
	}
	gd := gitrepo.GitDir(wt.Filesystem.Root())
	if gd == "" {
		return nil
	}
	return gitrepo.NewLooseObjects(filepath.Join(gd, "objects"))
}

// writeObject stores one object, whose id is h, in the repository.
func writeObject(repo *git.Repository, loose *gitrepo.LooseObjects, typ plumbing.ObjectType, data []byte, h plumbing.Hash) error {
	if loose != nil {
		return loose.Write(h, typ, data)
	}
	obj := repo.Storer.NewEncodedObject()
	obj.SetType(typ)
	w, err := obj.Writer()
	if err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	if _, err := repo.Storer.SetEncodedObject(obj); err != nil {
		return fmt.Errorf("storing object %s: %w", h, err)
	}
	return nil
}

// recordedObjects reads a recording's objects from memory, the rest from the
// repository's storage.
type recordedObjects struct {
	storer.EncodedObjectStorer
	mem map[plumbing.Hash]plumbing.EncodedObject
}

// EncodedObject returns the object h of type t, from memory when the recording
// holds it.
func (s recordedObjects) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	if o, ok := s.mem[h]; ok && (t == plumbing.AnyObject || o.Type() == t) {
		return o, nil
	}
	return s.EncodedObjectStorer.EncodedObject(t, h)
}

// TreeAfter returns the tree of the dispatch's last commit (HeadAfter) read from
// the objects kept with the recording, and whether they hold it.
func (e *Effects) TreeAfter() (string, bool) {
	if e == nil || e.HeadAfter == "" {
		return "", false
	}
	for _, o := range e.Objects {
		if o.Hash != e.HeadAfter || o.Type != "commit" {
			continue
		}
		data, err := base64.StdEncoding.DecodeString(o.Data)
		if err != nil || len(data) < 46 || string(data[:5]) != "tree " || data[45] != '\n' {
			return "", false
		}
		return string(data[5:45]), true
	}
	return "", false
}
