package checkpoint

import (
	"bytes"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// treeFile is one non-directory entry of a checkpoint tree: a file, an executable,
// a symlink or a submodule link, with its slash-separated path from the project root.
type treeFile struct {
	Path string
	Mode filemode.FileMode
	Hash plumbing.Hash
}

type treeNode struct {
	files map[string]treeFile
	dirs  map[string]*treeNode
}

func newTreeNode() *treeNode {
	return &treeNode{files: map[string]treeFile{}, dirs: map[string]*treeNode{}}
}

// buildTree writes the tree objects for files (any order) and returns the root tree.
func (o *objectStore) buildTree(files []treeFile) (plumbing.Hash, error) {
	if sortedByPath(len(files), func(i int) string { return files[i].Path }) {
		return o.buildSortedTree(len(files), func(i int) treeFile { return files[i] }, nil)
	}
	root := newTreeNode()
	// Files come mostly grouped by directory: the node of the previous file's
	// directory is kept, so most files cost one comparison instead of a walk.
	lastDir, lastNode := "", root
	for _, f := range files {
		slash := strings.LastIndexByte(f.Path, '/')
		dir, name := "", f.Path
		if slash >= 0 {
			dir, name = f.Path[:slash], f.Path[slash+1:]
		}
		if dir != lastDir {
			lastDir, lastNode = dir, root.descend(dir)
		}
		lastNode.files[name] = f
	}
	return o.writeTreeNode(root)
}

// sortedByPath reports whether the n paths, the i-th being path(i), are in
// strictly increasing order.
func sortedByPath(n int, path func(i int) string) bool {
	for i := 1; i < n; i++ {
		if path(i-1) >= path(i) {
			return false
		}
	}
	return true
}

// treeLevel is a directory whose tree buildSortedTree is encoding.
type treeLevel struct {
	path string // slash-separated from the root, "" for the root
	buf  []byte // its entries so far, encoded
}

// buildSortedTree is buildTree for n files in path order, the order of a
// snapshot's files, the i-th being at(i). Byte order of full paths is git's order of tree entries (a directory sorts
// as its name followed by "/"), so every entry is appended to its directory's tree in
// place, and a directory's tree is written as soon as a path outside it comes: no
// map of nodes and no sort per directory. A directory whose tree reuse remembers
// (nothing under it changed) takes that tree: its files are skipped unread.
func (o *objectStore) buildSortedTree(n int, at func(i int) treeFile, reuse *treeReuse) (plumbing.Hash, error) {
	if h, ok := reuse.reuse(""); ok {
		return h, nil
	}
	stack := []treeLevel{{}}
	w := o.startTreeWrites()
	closeTop := func() {
		top := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		h := w.write(top.buf)
		reuse.record(top.path, h)
		parent := &stack[len(stack)-1]
		parent.buf = appendTreeEntry(parent.buf, filemode.Dir, path.Base(top.path), h)
	}
	for i := 0; i < n; {
		f := at(i)
		dir, name := "", f.Path
		if slash := strings.LastIndexByte(f.Path, '/'); slash >= 0 {
			dir, name = f.Path[:slash], f.Path[slash+1:]
		}
		for top := stack[len(stack)-1].path; top != dir && !(top == "" || strings.HasPrefix(dir, top+"/")); top = stack[len(stack)-1].path {
			closeTop()
		}
		reused := false
		for top := stack[len(stack)-1].path; top != dir; top = stack[len(stack)-1].path {
			next := dir
			if i := strings.IndexByte(dir[len(top)+min(len(top), 1):], '/'); i >= 0 {
				next = dir[:len(top)+min(len(top), 1)+i]
			}
			if h, ok := reuse.reuse(next); ok {
				parent := &stack[len(stack)-1]
				parent.buf = appendTreeEntry(parent.buf, filemode.Dir, path.Base(next), h)
				i = pastDir(i, n, at, next)
				reused = true
				break
			}
			stack = append(stack, treeLevel{path: next, buf: w.buffer()})
		}
		if reused {
			continue
		}
		top := &stack[len(stack)-1]
		top.buf = appendTreeEntry(top.buf, f.Mode, name, f.Hash)
		i++
	}
	for len(stack) > 1 {
		closeTop()
	}
	h := w.write(stack[0].buf)
	reuse.record("", h)
	return h, w.wait()
}

// pastDir returns the index, in the n files in path order at(i), of the first
// file from i on that is not under directory dir.
func pastDir(i, n int, at func(i int) treeFile, dir string) int {
	prefix := dir + "/"
	return i + sort.Search(n-i, func(j int) bool { return !strings.HasPrefix(at(i+j).Path, prefix) })
}

// appendTreeEntry appends one entry of a tree object, encoded as git does.
func appendTreeEntry(buf []byte, mode filemode.FileMode, name string, h plumbing.Hash) []byte {
	buf = append(buf, modeText(mode)...)
	buf = append(buf, ' ')
	buf = append(buf, name...)
	buf = append(buf, 0)
	return append(buf, h[:]...)
}

// descend returns the node of the slash-separated directory dir under n, making
// the missing ones.
func (n *treeNode) descend(dir string) *treeNode {
	for dir != "" {
		part := dir
		if i := strings.IndexByte(dir, '/'); i >= 0 {
			part, dir = dir[:i], dir[i+1:]
		} else {
			dir = ""
		}
		child, ok := n.dirs[part]
		if !ok {
			child = newTreeNode()
			n.dirs[part] = child
		}
		n = child
	}
	return n
}

type encodedEntry struct {
	sortKey string
	name    string
	mode    filemode.FileMode
	hash    plumbing.Hash
}

func (o *objectStore) writeTreeNode(n *treeNode) (plumbing.Hash, error) {
	entries := make([]encodedEntry, 0, len(n.files)+len(n.dirs))
	for name, f := range n.files {
		entries = append(entries, encodedEntry{sortKey: name, name: name, mode: f.Mode, hash: f.Hash})
	}
	for name, child := range n.dirs {
		h, err := o.writeTreeNode(child)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		entries = append(entries, encodedEntry{sortKey: name + "/", name: name, mode: filemode.Dir, hash: h})
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].sortKey < entries[j].sortKey })
	buf := make([]byte, 0, len(entries)*64)
	for _, e := range entries {
		buf = appendTreeEntry(buf, e.mode, e.name, e.hash)
	}
	return o.write(plumbing.TreeObject, buf)
}

// modeText is a tree entry's mode as git writes it (octal, no leading zero).
func modeText(m filemode.FileMode) string {
	switch m {
	case filemode.Regular:
		return "100644"
	case filemode.Dir:
		return "40000"
	case filemode.Executable:
		return "100755"
	case filemode.Symlink:
		return "120000"
	}
	return strconv.FormatUint(uint64(m), 8)
}

// UnsafeTreeError says a checkpoint tree holds an entry that could make a restore
// write outside the project or into its .git directory.
type UnsafeTreeError struct {
	Tree   plumbing.Hash
	Path   string
	Reason string
}

// Error returns the one-line explanation.
func (e *UnsafeTreeError) Error() string {
	return fmt.Sprintf("checkpoint tree %s is unsafe to restore: entry %q %s; nothing was written", e.Tree.String()[:8], e.Path, e.Reason)
}

// readTreeFiles reads every non-directory entry under tree h (subtrees in
// parallel), validating each name and every symlink target, and returns them by path.
func (o *objectStore) readTreeFiles(h plumbing.Hash) (map[string]treeFile, error) {
	out, err := o.readTreeEntries(h)
	if err != nil {
		return nil, err
	}
	for p, f := range out {
		if f.Mode != filemode.Symlink {
			continue
		}
		_, target, err := o.read(f.Hash)
		if err != nil {
			return nil, err
		}
		if reason := unsafeLink(p, string(target)); reason != "" {
			return nil, &UnsafeTreeError{Tree: h, Path: p, Reason: reason}
		}
	}
	return out, nil
}

// readTreeEntries reads every non-directory entry under tree h (subtrees in
// parallel), validating each name, and returns them by path. Symlink targets are not
// checked: the caller writes none of them to disk.
func (o *objectStore) readTreeEntries(h plumbing.Hash) (map[string]treeFile, error) {
	r := &treeReader{o: o, root: h, out: map[string]treeFile{}, sem: make(chan struct{}, ioWorkers())}
	r.wg.Add(1)
	r.read(h, "")
	r.wg.Wait()
	if r.err != nil {
		return nil, r.err
	}
	return r.out, nil
}

type treeReader struct {
	o    *objectStore
	root plumbing.Hash
	sem  chan struct{}
	wg   sync.WaitGroup
	mu   sync.Mutex
	out  map[string]treeFile
	err  error
}

func (r *treeReader) fail(err error) {
	r.mu.Lock()
	if r.err == nil {
		r.err = err
	}
	r.mu.Unlock()
}

func (r *treeReader) read(h plumbing.Hash, prefix string) {
	defer r.wg.Done()
	r.sem <- struct{}{}
	files, dirs, err := r.o.readTreeLevel(r.root, h, prefix)
	<-r.sem
	if err != nil {
		r.fail(err)
		return
	}
	r.mu.Lock()
	for _, f := range files {
		r.out[f.Path] = f
	}
	r.mu.Unlock()
	for _, d := range dirs {
		r.wg.Add(1)
		go r.read(d.Hash, d.Path)
	}
}

// readTreeLevel reads one tree object: its files and its subtrees (as treeFiles
// whose Hash is the subtree), validating every name.
func (o *objectStore) readTreeLevel(root, h plumbing.Hash, prefix string) (files, dirs []treeFile, err error) {
	t, data, err := o.read(h)
	if err != nil {
		return nil, nil, err
	}
	if t != plumbing.TreeObject {
		return nil, nil, fmt.Errorf("object %s under %q is a %s, not a tree; the shadow repository is damaged", h, prefix, t)
	}
	seen := map[string]bool{}
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		nul := bytes.IndexByte(data, 0)
		if sp < 0 || nul < sp || len(data) < nul+21 {
			return nil, nil, fmt.Errorf("tree %s under %q is damaged; the shadow repository needs repair", h, prefix)
		}
		modeN, err := strconv.ParseUint(string(data[:sp]), 8, 32)
		if err != nil {
			return nil, nil, fmt.Errorf("tree %s under %q has a bad mode %q", h, prefix, data[:sp])
		}
		name := string(data[sp+1 : nul])
		var eh plumbing.Hash
		copy(eh[:], data[nul+1:nul+21])
		data = data[nul+21:]
		full := path.Join(prefix, name)
		if reason := unsafeName(name); reason != "" {
			return nil, nil, &UnsafeTreeError{Tree: root, Path: prefix + "/" + name, Reason: reason}
		}
		if seen[name] {
			return nil, nil, &UnsafeTreeError{Tree: root, Path: full, Reason: "appears twice"}
		}
		seen[name] = true
		mode := filemode.FileMode(modeN)
		switch mode {
		case filemode.Dir:
			dirs = append(dirs, treeFile{Path: full, Mode: mode, Hash: eh})
		case filemode.Regular, filemode.Deprecated, filemode.Executable, filemode.Symlink, filemode.Submodule:
			if mode == filemode.Deprecated {
				mode = filemode.Regular
			}
			files = append(files, treeFile{Path: full, Mode: mode, Hash: eh})
		default:
			return nil, nil, &UnsafeTreeError{Tree: root, Path: full, Reason: fmt.Sprintf("has the unknown mode %o", modeN)}
		}
	}
	return files, dirs, nil
}

func unsafeName(name string) string {
	switch {
	case name == "" || name == "." || name == "..":
		return "is not a file name"
	case strings.ContainsAny(name, "/\\\x00"):
		return "contains a path separator (an absolute or ../ path)"
	case dotGit(name):
		return "would write into .git"
	}
	return ""
}

// dotGit reports whether name opens a repository's .git directory on some file
// system replay runs on: ".git" in any case; on NTFS also followed by dots and
// spaces or by an alternate data stream (".git::$INDEX_ALLOCATION"), and its 8.3
// short name GIT~1; on HFS+ with a code point HFS ignores (U+200C-U+200F,
// U+202A-U+202E, U+206A-U+206F, U+FEFF) anywhere in it. Git refuses the same
// names (core.protectNTFS, core.protectHFS); replay refuses them on every system,
// since a checkpoint made on one is restored on another.
func dotGit(name string) bool {
	n := strings.Map(func(r rune) rune {
		if (r >= 0x200c && r <= 0x200f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x206a && r <= 0x206f) || r == 0xfeff {
			return -1
		}
		return r
	}, name)
	if i := strings.IndexByte(n, ':'); i >= 0 {
		n = n[:i]
	}
	n = strings.TrimRight(n, ". ")
	return strings.EqualFold(n, ".git") || strings.EqualFold(n, "git~1")
}

// unsafeLink says why a symlink at p pointing to target escapes the project, or "".
func unsafeLink(p, target string) string {
	if target == "" {
		return "is a symlink with an empty target"
	}
	if strings.HasPrefix(target, "/") || strings.HasPrefix(target, "\\") || (len(target) > 1 && target[1] == ':') {
		return fmt.Sprintf("is a symlink to the absolute path %q outside the project", target)
	}
	leading := true
	for _, part := range strings.Split(target, "/") {
		switch {
		case part == "..":
			if !leading {
				return fmt.Sprintf("is a symlink to %q whose \"..\" follows a name (it could leave the project through another link)", target)
			}
		case part != "" && part != ".":
			leading = false
		}
	}
	joined := path.Clean(path.Join(path.Dir(p), target))
	if joined == ".." || strings.HasPrefix(joined, "../") {
		return fmt.Sprintf("is a symlink to %q, outside the project", target)
	}
	for _, part := range strings.Split(joined, "/") {
		if dotGit(part) {
			return fmt.Sprintf("is a symlink to %q, into .git", target)
		}
	}
	return ""
}
