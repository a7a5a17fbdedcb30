package pipesim

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"
)

// objects writes git objects into one repository's object database through
// go-git's in-memory object storage and its format encoders: the objects are
// written by flush as one packfile with its index, and the branches as one
// packed-refs file, as `git gc` would leave them. Everything is written once
// per repository: file system calls are most of a seed's cost.
type objects struct {
	dir    string
	mem    *memory.Storage
	hashes []plumbing.Hash
	refs   map[string]plumbing.Hash
}

// initGitDir creates a git directory at dir with the given config text and HEAD
// pointing at branch, and returns its object writer.
func initGitDir(dir, config, branch string) (*objects, error) {
	if err := os.MkdirAll(filepath.Join(dir, "objects", "pack"), 0o755); err != nil {
		return nil, err
	}
	if err := os.Mkdir(filepath.Join(dir, "refs"), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "config"), []byte(config), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "HEAD"), []byte("ref: refs/heads/"+branch+"\n"), 0o644); err != nil {
		return nil, err
	}
	return &objects{dir: dir, mem: memory.NewStorage(), refs: map[string]plumbing.Hash{}}, nil
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

// flush writes every object stored so far as one packfile and its index, and
// the branches as packed-refs.
func (o *objects) flush() error {
	if len(o.hashes) > 0 {
		var pack bytes.Buffer
		sum, err := packfile.NewEncoder(&pack, o.mem, false).Encode(o.hashes, 0)
		if err != nil {
			return err
		}
		var iw idxfile.Writer
		parser, err := packfile.NewParser(packfile.NewScanner(bytes.NewReader(pack.Bytes())), &iw)
		if err != nil {
			return err
		}
		if _, err := parser.Parse(); err != nil {
			return err
		}
		idx, err := iw.Index()
		if err != nil {
			return err
		}
		var ib bytes.Buffer
		if _, err := idxfile.NewEncoder(&ib).Encode(idx); err != nil {
			return err
		}
		base := filepath.Join(o.dir, "objects", "pack", "pack-"+sum.String())
		if err := os.WriteFile(base+".pack", pack.Bytes(), 0o444); err != nil {
			return err
		}
		if err := os.WriteFile(base+".idx", ib.Bytes(), 0o444); err != nil {
			return err
		}
		o.hashes = nil
	}
	names := make([]string, 0, len(o.refs))
	for n := range o.refs {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("# pack-refs with: peeled fully-peeled sorted \n")
	for _, n := range names {
		fmt.Fprintf(&b, "%s %s\n", o.refs[n], n)
	}
	return os.WriteFile(filepath.Join(o.dir, "packed-refs"), []byte(b.String()), 0o644)
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

// setBranch points branch at h (written by flush).
func (o *objects) setBranch(branch string, h plumbing.Hash) {
	o.refs[plumbing.NewBranchReferenceName(branch).String()] = h
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
	var b bytes.Buffer
	if err := index.NewEncoder(&b).Encode(idx); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(o.dir, "index"), b.Bytes(), 0o644)
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
