package pipesim

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/memory"
)

// objects writes git objects into one repository's object database through
// go-git's storage: they are collected in memory and written as one packfile
// (with its index) by flush, as `git gc` would leave them; refs and the index
// go straight to the git directory.
type objects struct {
	st     *filesystem.Storage
	mem    *memory.Storage
	hashes []plumbing.Hash
}

// initGitDir creates a git directory at dir with the given config text and HEAD
// pointing at branch, and returns its object writer.
func initGitDir(dir, config, branch string) (*objects, error) {
	for _, d := range []string{"objects/info", "objects/pack", "refs/heads", "refs/tags"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "config"), []byte(config), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "HEAD"), []byte("ref: refs/heads/"+branch+"\n"), 0o644); err != nil {
		return nil, err
	}
	return &objects{st: filesystem.NewStorage(osfs.New(dir), cache.NewObjectLRUDefault()), mem: memory.NewStorage()}, nil
}

// put stores obj once.
func (o *objects) put(obj plumbing.EncodedObject) (plumbing.Hash, error) {
	h := obj.Hash()
	if o.mem.HasEncodedObject(h) == nil {
		return h, nil
	}
	o.hashes = append(o.hashes, h)
	return o.mem.SetEncodedObject(obj)
}

// flush writes every object stored so far as one packfile and its index.
func (o *objects) flush() error {
	if len(o.hashes) == 0 {
		return nil
	}
	w, err := o.st.PackfileWriter()
	if err != nil {
		return err
	}
	if _, err := packfile.NewEncoder(w, o.mem, false).Encode(o.hashes, 0); err != nil {
		w.Close()
		return err
	}
	o.hashes = nil
	return w.Close()
}

func (o *objects) blob(content []byte) (plumbing.Hash, error) {
	obj := o.mem.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	w, err := obj.Writer()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if _, err := w.Write(content); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := w.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	return o.put(obj)
}

// tree writes the tree of files (slash paths to contents) and its subtrees.
func (o *objects) tree(files map[string]string) (plumbing.Hash, error) {
	blobs := map[string]string{}
	subs := map[string]map[string]string{}
	for p, c := range files {
		if dir, rest, ok := strings.Cut(p, "/"); ok {
			if subs[dir] == nil {
				subs[dir] = map[string]string{}
			}
			subs[dir][rest] = c
		} else {
			blobs[p] = c
		}
	}
	var t object.Tree
	for name, c := range blobs {
		h, err := o.blob([]byte(c))
		if err != nil {
			return plumbing.ZeroHash, err
		}
		t.Entries = append(t.Entries, object.TreeEntry{Name: name, Mode: filemode.Regular, Hash: h})
	}
	for name, sub := range subs {
		h, err := o.tree(sub)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		t.Entries = append(t.Entries, object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h})
	}
	// git orders entries by name, a directory compared as if it ended in "/".
	key := func(e object.TreeEntry) string {
		if e.Mode == filemode.Dir {
			return e.Name + "/"
		}
		return e.Name
	}
	sort.Slice(t.Entries, func(i, j int) bool { return key(t.Entries[i]) < key(t.Entries[j]) })
	obj := o.mem.NewEncodedObject()
	if err := t.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return o.put(obj)
}

// commit writes a commit of tree with parent (zero: none) at when, author and
// committer sig, and returns its hash.
func (o *objects) commit(tree, parent plumbing.Hash, msg string, sig object.Signature) (plumbing.Hash, error) {
	c := object.Commit{Author: sig, Committer: sig, Message: msg, TreeHash: tree}
	if !parent.IsZero() {
		c.ParentHashes = []plumbing.Hash{parent}
	}
	obj := o.mem.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return o.put(obj)
}

func (o *objects) setBranch(branch string, h plumbing.Hash) error {
	return o.st.SetReference(plumbing.NewHashReference(plumbing.NewBranchReferenceName(branch), h))
}

// writeIndex writes the index of files as `git add` leaves it after a commit.
func (o *objects) writeIndex(files map[string]string, mtime time.Time) error {
	idx := &index.Index{Version: 2}
	names := make([]string, 0, len(files))
	for p := range files {
		names = append(names, p)
	}
	sort.Strings(names)
	for _, p := range names {
		h := plumbing.ComputeHash(plumbing.BlobObject, []byte(files[p]))
		idx.Entries = append(idx.Entries, &index.Entry{Name: p, Hash: h, Mode: filemode.Regular, Size: uint32(len(files[p])), ModifiedAt: mtime})
	}
	return o.st.SetIndex(idx)
}

// signature is a git identity at time t in t's zone.
func signature(name, email string, t time.Time) object.Signature {
	return object.Signature{Name: name, Email: email, When: t}
}

// projectConfig is the config `git init` writes for a project.
const projectConfig = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n"

// shadowConfig is the config of a shadow checkpoint repository: initialised
// with GIT_DIR and GIT_WORK_TREE, so core.worktree names the project.
func shadowConfig(project string) string {
	return fmt.Sprintf("[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n\tworktree = %s\n[gc]\n\tauto = 0\n", project)
}
