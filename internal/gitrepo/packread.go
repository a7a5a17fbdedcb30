package gitrepo

import (
	"errors"
	"io"
	"path"
	"strings"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// packDir is where a repository keeps its pack files, relative to its .git directory.
const packDir = "objects/pack"

// packWindow is how much of a pack file one read brings in: commits lie side by
// side in a pack (git writes them first, newest first), so one read serves many.
const packWindow = 64 << 10

// errNotLean says the lean reader does not handle an object (a delta, a version of
// the index it does not know, a damaged stream): the caller asks go-git instead.
var errNotLean = errors.New("not read by the lean reader")

// packFile is one pack file and its version 2 index (a PackIndex).
type packFile struct {
	pack billy.File
	idx  *PackIndex

	win    []byte // a window of the pack file, from winOff
	winOff int64
}

// openPacks opens every pack of the repository whose index is version 2; packs it
// cannot read are left out (their objects come from go-git).
func openPacks(fs billy.Filesystem) []*packFile {
	if CheckPackDir(fs.Root()) != nil {
		return nil // Open refuses the repository; nothing here is opened
	}
	entries, err := fs.ReadDir(packDir)
	if err != nil {
		return nil
	}
	var packs []*packFile
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, "pack-") || !strings.HasSuffix(name, ".idx") {
			continue
		}
		p, err := openPack(fs, path.Join(packDir, name))
		if err != nil {
			continue
		}
		packs = append(packs, p)
	}
	return packs
}

// openPack reads the index at idxPath and opens its pack.
func openPack(fs billy.Filesystem, idxPath string) (*packFile, error) {
	f, err := fs.Open(idxPath)
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(f)
	_ = f.Close()
	if err != nil {
		return nil, err
	}
	idx, err := NewPackIndex(data)
	if err != nil {
		return nil, errNotLean
	}
	p := &packFile{idx: idx}
	if p.pack, err = fs.Open(strings.TrimSuffix(idxPath, ".idx") + ".pack"); err != nil {
		return nil, err
	}
	return p, nil
}

// close closes the pack.
func (p *packFile) close() { _ = p.pack.Close() }

// offset returns where the object h starts in the pack; false when the pack does not
// hold it.
func (p *packFile) offset(h plumbing.Hash) (int64, bool, error) {
	off, err := p.idx.FindOffset(h)
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, errNotLean
	}
	return off, true, nil
}

// packStream reads a pack file from pos on through the pack's window.
type packStream struct {
	p   *packFile
	pos int64
}

// ReadByte returns the byte at pos (flate reads through it without buffering more).
func (s *packStream) ReadByte() (byte, error) {
	if err := s.fill(); err != nil {
		return 0, err
	}
	b := s.p.win[s.pos-s.p.winOff]
	s.pos++
	return b, nil
}

// Read copies from the window, refilling it when pos leaves it.
func (s *packStream) Read(b []byte) (int, error) {
	if err := s.fill(); err != nil {
		return 0, err
	}
	n := copy(b, s.p.win[s.pos-s.p.winOff:])
	s.pos += int64(n)
	return n, nil
}

// fill makes the window cover pos.
func (s *packStream) fill() error {
	p := s.p
	if s.pos >= p.winOff && s.pos < p.winOff+int64(len(p.win)) {
		return nil
	}
	if cap(p.win) < packWindow {
		p.win = make([]byte, packWindow)
	}
	n, err := p.pack.ReadAt(p.win[:packWindow], s.pos)
	p.win, p.winOff = p.win[:n], s.pos
	if n > 0 {
		return nil
	}
	if err == nil {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// errSizeOverflow says a pack entry header declares a size past 2^63.
var errSizeOverflow = errors.New("pack entry size overflows")

// ReadPackEntryHeader reads the header of a pack entry: its type (a delta's type
// too: OFS_DELTA or REF_DELTA; the caller decides what it reads) and the size of its
// inflated content.
func ReadPackEntryHeader(br io.ByteReader) (plumbing.ObjectType, int64, error) {
	c, err := br.ReadByte()
	if err != nil {
		return 0, 0, err
	}
	typ := plumbing.ObjectType((c >> 4) & 7)
	size, shift := int64(c&15), uint(4)
	for c&0x80 != 0 {
		if c, err = br.ReadByte(); err != nil {
			return 0, 0, err
		}
		if shift > 56 {
			return 0, 0, errSizeOverflow
		}
		size |= int64(c&0x7f) << shift
		shift += 7
	}
	return typ, size, nil
}

// inflater reads whole, undeltified objects out of packs (the commits of a walk),
// reusing one zlib reader (see inflate) and one buffer.
type inflater struct {
	zr  io.ReadCloser
	buf []byte
}

// object returns the type and content of the object at off; errNotLean for deltas.
// The content is valid until the next call.
func (z *inflater) object(p *packFile, off int64) (plumbing.ObjectType, []byte, error) {
	s := &packStream{p: p, pos: off}
	typ, n, err := ReadPackEntryHeader(s)
	if errors.Is(err, errSizeOverflow) {
		return 0, nil, errNotLean
	}
	if err != nil {
		return 0, nil, err
	}
	size := uint64(n)
	if typ < plumbing.CommitObject || typ > plumbing.TagObject || size > 1<<26 {
		return 0, nil, errNotLean
	}
	if err := inflate(&z.zr, s); err != nil {
		return 0, nil, errNotLean
	}
	if uint64(cap(z.buf)) < size {
		z.buf = make([]byte, size)
	}
	z.buf = z.buf[:size]
	if _, err := io.ReadFull(z.zr, z.buf); err != nil {
		return 0, nil, errNotLean
	}
	return typ, z.buf, nil
}
