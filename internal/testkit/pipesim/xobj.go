package pipesim

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/go-git/go-billy/v5/osfs"
)

// The simulator's own git plumbing: the scenario's agents commit and its
// checkpoints snapshot event by event, thousands of times per second, so they
// read and write a git directory's loose objects, refs and index directly
// (go-git's repository layer resolves every path through a symlink-checking
// file system and rewrites objects that exist). What they write is plain git:
// loose objects, loose refs and a version-2 index, read back by go-git and by
// the product. An object only packed (the product may pack) is read through
// go-git's storage.

// xRepo is one git directory.
type xRepo struct {
	dir    string              // the git directory (.git, or a bare shadow repository)
	packed *filesystem.Storage // go-git's storage, opened for packed objects only
	loose  *xLoose             // its loose objects known to be there
}

func openXRepo(dir string) *xRepo {
	v, ok := xLooseOf.Load(dir)
	if !ok {
		v, _ = xLooseOf.LoadOrStore(dir, &xLoose{objs: map[plumbing.Hash]*plumbing.MemoryObject{}})
	}
	return &xRepo{dir: dir, loose: v.(*xLoose)}
}

// xLooseOf holds, per git directory of a running seed, the loose objects known
// to be there: written or found there by put (nil content), read there by
// object (the content). Nothing removes a loose object from a seed's
// repositories (the product and the simulator only add them, each object's
// content is its hash's), so an object known there is there, with that
// content: put need not try to create it again, object need not read it again.
// XRunSeed forgets its seed's directories when it ends (xForgetLoose).
var xLooseOf sync.Map // git directory -> *xLoose

type xLoose struct {
	mu   sync.Mutex
	objs map[plumbing.Hash]*plumbing.MemoryObject // present; the content once read
	fan  [256]bool                                // objects/xx directories put made or found
}

// fanKnown says whether put made or found the object directory of h's first
// byte, and marks it so from now on.
func (l *xLoose) fanKnown(h plumbing.Hash) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	known := l.fan[h[0]]
	l.fan[h[0]] = true
	return known
}

func (l *xLoose) get(h plumbing.Hash) (*plumbing.MemoryObject, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	o, ok := l.objs[h]
	return o, ok
}

func (l *xLoose) set(h plumbing.Hash, o *plumbing.MemoryObject) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if o != nil || l.objs[h] == nil {
		l.objs[h] = o
	}
}

// xForgetLoose forgets what is known of the git directories under root.
func xForgetLoose(root string) {
	prefix := filepath.Clean(root) + string(filepath.Separator)
	xLooseOf.Range(func(k, _ any) bool {
		if strings.HasPrefix(k.(string), prefix) {
			xLooseOf.Delete(k)
		}
		return true
	})
}

var xUnzlib sync.Pool // zlib readers

// xZlib are the zlib writers of the objects the simulator writes: stored,
// not compressed (a valid zlib stream that git and go-git read; an object's
// hash is its content's, so nothing but the file's size changes).
var xZlib = sync.Pool{New: func() any {
	w, _ := zlib.NewWriterLevel(nil, zlib.NoCompression)
	return w
}}

// put writes an object of type t with data unless the repository has it as a
// loose object already, and returns its hash.
func (r *xRepo) put(t plumbing.ObjectType, data []byte) (plumbing.Hash, error) {
	h := plumbing.ComputeHash(t, data)
	if _, ok := r.loose.get(h); ok {
		return h, nil
	}
	hex := h.String()
	p := filepath.Join(r.dir, "objects", hex[:2], hex[2:])
	// a new file in place, made only when it is not there: nothing reads the
	// repository while the simulator writes it, and a crash of the simulator
	// itself is no crash it simulates. The object directory is made first
	// when put has not seen it yet (a repository's objects spread over up to
	// 256 of them, so most of a seed's new objects would first fail to be
	// created); one a repack removed since is made again below.
	// Its error is the one the fallback below meets again.
	if !r.loose.fanKnown(h) {
		_ = os.Mkdir(filepath.Dir(p), 0o755)
	}
	f, err := xCreate(p, 0o444)
	if errors.Is(err, os.ErrNotExist) {
		if err = os.Mkdir(filepath.Dir(p), 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			err = os.MkdirAll(filepath.Dir(p), 0o755)
		}
		if err == nil || errors.Is(err, os.ErrExist) {
			f, err = xCreate(p, 0o444)
		}
	}
	if errors.Is(err, os.ErrExist) {
		r.loose.set(h, nil)
		return h, nil
	}
	if err != nil {
		return h, err
	}
	var buf bytes.Buffer
	zw := xZlib.Get().(*zlib.Writer)
	defer xZlib.Put(zw)
	zw.Reset(&buf)
	fmt.Fprintf(zw, "%s %d\x00", t, len(data))
	_, err = zw.Write(data)
	if err == nil {
		err = zw.Close()
	}
	if err == nil {
		err = f.Write(buf.Bytes())
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(p)
	} else {
		r.loose.set(h, nil)
	}
	return h, err
}

// putObject encodes o (a commit or a tree) and writes it.
func (r *xRepo) putObject(o interface {
	Encode(plumbing.EncodedObject) error
}) (plumbing.Hash, error) {
	var m plumbing.MemoryObject
	if err := o.Encode(&m); err != nil {
		return plumbing.ZeroHash, err
	}
	rd, err := m.Reader()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	data, err := io.ReadAll(rd)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return r.put(m.Type(), data)
}

// object reads an object: loose, else through go-git's storage (packed).
func (r *xRepo) object(h plumbing.Hash) (plumbing.EncodedObject, error) {
	if o, _ := r.loose.get(h); o != nil {
		return o, nil
	}
	hex := h.String()
	raw, err := xReadFile(filepath.Join(r.dir, "objects", hex[:2], hex[2:]))
	if err != nil {
		if r.packed == nil {
			r.packed = filesystem.NewStorage(osfs.New(r.dir), cache.NewObjectLRUDefault())
		}
		return r.packed.EncodedObject(plumbing.AnyObject, h)
	}
	var zr io.ReadCloser
	if pooled, ok := xUnzlib.Get().(io.ReadCloser); ok && pooled.(zlib.Resetter).Reset(bytes.NewReader(raw), nil) == nil {
		zr = pooled
		defer xUnzlib.Put(pooled)
	} else if zr, err = zlib.NewReader(bytes.NewReader(raw)); err != nil {
		return nil, fmt.Errorf("object %s: %w", hex, err)
	} else {
		defer xUnzlib.Put(zr)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("object %s: %w", hex, err)
	}
	head, body, ok := bytes.Cut(data, []byte{0})
	typ, size, ok2 := strings.Cut(string(head), " ")
	n, serr := strconv.Atoi(size)
	if !ok || !ok2 || serr != nil || n != len(body) {
		return nil, fmt.Errorf("object %s: bad header %q", hex, head)
	}
	t, err := plumbing.ParseObjectType(typ)
	if err != nil {
		return nil, fmt.Errorf("object %s: %w", hex, err)
	}
	m := &plumbing.MemoryObject{}
	m.SetType(t)
	m.SetSize(int64(n))
	_, _ = m.Write(body)
	m.Hash() // computed now: the object is shared, its lazily set hash would be a race
	r.loose.set(h, m)
	return m, nil
}

func (r *xRepo) commit(h plumbing.Hash) (*object.Commit, error) {
	o, err := r.object(h)
	if err != nil {
		return nil, err
	}
	var c object.Commit
	if err := c.Decode(o); err != nil {
		return nil, err
	}
	return &c, nil
}

func (r *xRepo) tree(h plumbing.Hash) (*object.Tree, error) {
	o, err := r.object(h)
	if err != nil {
		return nil, err
	}
	var t object.Tree
	if err := t.Decode(o); err != nil {
		return nil, err
	}
	return &t, nil
}

// ref reads a branch or other ref: its loose file, else packed-refs;
// ZeroHash when there is neither.
func (r *xRepo) ref(name string) (plumbing.Hash, error) {
	data, err := xReadFile(filepath.Join(r.dir, filepath.FromSlash(name)))
	if err == nil {
		s := strings.TrimSpace(string(data))
		if !plumbing.IsHash(s) {
			return plumbing.ZeroHash, fmt.Errorf("%s: %q is no hash", name, s)
		}
		return plumbing.NewHash(s), nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return plumbing.ZeroHash, err
	}
	packed, err := xReadFile(filepath.Join(r.dir, "packed-refs"))
	if err != nil {
		return plumbing.ZeroHash, nil
	}
	for _, line := range strings.Split(string(packed), "\n") {
		if h, n, ok := strings.Cut(line, " "); ok && n == name && plumbing.IsHash(h) {
			return plumbing.NewHash(h), nil
		}
	}
	return plumbing.ZeroHash, nil
}

// setRef points name at h (a loose ref, which wins over packed-refs).
func (r *xRepo) setRef(name string, h plumbing.Hash) error {
	p := filepath.Join(r.dir, filepath.FromSlash(name))
	return xInDir(p, func() error { return xWriteFile(p, []byte(h.String()+"\n"), 0o644) })
}

// xInDir runs write, which opens path to write it, and, when a directory on
// the way is missing, makes the directories and runs it again: the same as
// os.MkdirAll first, without its stat when they are there (mostly).
func xInDir(path string, write func() error) error {
	err := write()
	if errors.Is(err, os.ErrNotExist) {
		if err = os.MkdirAll(filepath.Dir(path), 0o755); err == nil {
			err = write()
		}
	}
	return err
}

// head is the ref HEAD names (HEAD itself when detached) and its commit
// (ZeroHash on an unborn branch).
func (r *xRepo) head() (string, plumbing.Hash, error) {
	data, err := xReadFile(filepath.Join(r.dir, "HEAD"))
	if err != nil {
		return "", plumbing.ZeroHash, err
	}
	s := strings.TrimSpace(string(data))
	if target, ok := strings.CutPrefix(s, "ref: "); ok {
		h, err := r.ref(target)
		return target, h, err
	}
	if !plumbing.IsHash(s) {
		return "", plumbing.ZeroHash, fmt.Errorf("HEAD: %q is no ref or hash", s)
	}
	return "HEAD", plumbing.NewHash(s), nil
}

// readIndex reads the index (an empty one when there is none).
func (r *xRepo) readIndex() (*index.Index, error) {
	idx := &index.Index{Version: 2}
	p := filepath.Join(r.dir, "index")
	data, err := xReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return idx, nil
	}
	if err != nil {
		return nil, err
	}
	if err := index.NewDecoder(bytes.NewReader(data)).Decode(idx); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return idx, nil
}

func (r *xRepo) writeIndex(idx *index.Index) error {
	var buf bytes.Buffer
	if err := index.NewEncoder(&buf).Encode(idx); err != nil {
		return err
	}
	return xWriteFile(filepath.Join(r.dir, "index"), buf.Bytes(), 0o644)
}

// treeOfIndex writes the trees of the index's entries, as a commit of the
// index writes them, and returns the root tree's hash.
func (r *xRepo) treeOfIndex(idx *index.Index) (plumbing.Hash, error) {
	trees := map[string]*object.Tree{"": {}}
	for _, e := range idx.Entries {
		parent := ""
		parts := strings.Split(e.Name, "/")
		for i, part := range parts {
			full := path.Join(parent, part)
			if i == len(parts)-1 {
				trees[parent].Entries = append(trees[parent].Entries, object.TreeEntry{Name: part, Mode: e.Mode, Hash: e.Hash})
			} else if _, ok := trees[full]; !ok {
				trees[full] = &object.Tree{}
				trees[parent].Entries = append(trees[parent].Entries, object.TreeEntry{Name: part, Mode: filemode.Dir})
			}
			parent = full
		}
	}
	var write func(dir string) (plumbing.Hash, error)
	write = func(dir string) (plumbing.Hash, error) {
		t := trees[dir]
		for i, e := range t.Entries {
			if e.Mode == filemode.Dir {
				h, err := write(path.Join(dir, e.Name))
				if err != nil {
					return h, err
				}
				t.Entries[i].Hash = h
			}
		}
		sort.Slice(t.Entries, func(i, j int) bool { return gitName(t.Entries[i]) < gitName(t.Entries[j]) })
		return r.putObject(t)
	}
	return write("")
}

// errEmptyCommit is go-git's refusal of a commit whose tree is its parent's.
var errEmptyCommit = errors.New("cannot create empty commit: clean working tree")

// stage is `git add file` in the worktree whose git directory is r: the
// file's blob is written and its index entry (hash, mode, size, mtime) set in
// idx, which is written.
func (r *xRepo) stage(idx *index.Index, worktree, file string) error {
	full := filepath.Join(worktree, filepath.FromSlash(file))
	info, err := os.Lstat(full)
	if err != nil {
		return err
	}
	data, err := xReadFile(full)
	if err != nil {
		return err
	}
	blob, err := r.put(plumbing.BlobObject, data)
	if err != nil {
		return err
	}
	e, err := idx.Entry(file)
	if errors.Is(err, index.ErrEntryNotFound) {
		e, err = idx.Add(file), nil
	}
	if err != nil {
		return err
	}
	e.Hash, e.ModifiedAt, e.Size = blob, info.ModTime(), uint32(info.Size())
	if e.Mode, err = filemode.NewFromOSFileMode(info.Mode()); err != nil {
		return err
	}
	return r.writeIndex(idx)
}

// commitIndex is `git commit -m msg` of idx, the index: the whole index as
// the next commit of the branch HEAD names; a commit that changes nothing is
// refused as go-git refuses it.
func (r *xRepo) commitIndex(idx *index.Index, msg string, sig object.Signature) (plumbing.Hash, error) {
	tree, err := r.treeOfIndex(idx)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	ref, parent, err := r.head()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	c := &object.Commit{Author: sig, Committer: sig, Message: msg, TreeHash: tree}
	if !parent.IsZero() {
		pc, err := r.commit(parent)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if pc.TreeHash == tree {
			return plumbing.ZeroHash, errEmptyCommit
		}
		c.ParentHashes = []plumbing.Hash{parent}
	} else if len(idx.Entries) == 0 {
		return plumbing.ZeroHash, errEmptyCommit
	}
	h, err := r.putObject(c)
	if err != nil {
		return h, err
	}
	return h, r.setRef(ref, h)
}

// firstParents is the commits from h back to the root, first parents only.
func (r *xRepo) firstParents(h plumbing.Hash) ([]*object.Commit, error) {
	var out []*object.Commit
	for !h.IsZero() {
		c, err := r.commit(h)
		if err != nil {
			return out, err
		}
		out = append(out, c)
		if len(c.ParentHashes) == 0 {
			break
		}
		h = c.ParentHashes[0]
	}
	return out, nil
}

// refs is every ref of the repository with a hash: loose refs under refs/,
// and packed-refs the loose ones do not override.
func (r *xRepo) refs() (map[string]plumbing.Hash, error) {
	out := map[string]plumbing.Hash{}
	if packed, err := xReadFile(filepath.Join(r.dir, "packed-refs")); err == nil {
		for _, line := range strings.Split(string(packed), "\n") {
			if h, n, ok := strings.Cut(line, " "); ok && plumbing.IsHash(h) && strings.HasPrefix(n, "refs/") {
				out[n] = plumbing.NewHash(h)
			}
		}
	}
	err := filepath.WalkDir(filepath.Join(r.dir, "refs"), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		data, err := xReadFile(p)
		if err != nil {
			return err
		}
		if h := strings.TrimSpace(string(data)); plumbing.IsHash(h) {
			rel, _ := filepath.Rel(r.dir, p)
			out[filepath.ToSlash(rel)] = plumbing.NewHash(h)
		}
		return nil
	})
	return out, err
}

// reachable calls fn for every commit the refs reach, once each.
func (r *xRepo) reachable(fn func(*object.Commit)) error {
	refs, err := r.refs()
	if err != nil {
		return err
	}
	seen := map[plumbing.Hash]bool{}
	for _, name := range sortedKeys(refs) {
		stack := []plumbing.Hash{refs[name]}
		for len(stack) > 0 {
			h := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if seen[h] {
				continue
			}
			seen[h] = true
			c, err := r.commit(h)
			if err != nil {
				continue // a ref to a tag or a blob, or a missing object
			}
			fn(c)
			stack = append(stack, c.ParentHashes...)
		}
	}
	return nil
}
