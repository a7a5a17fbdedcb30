package share

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// largeObject is the size above which the shadow repository's objects are
// read lazily, from disk, as they are packed or unpacked: never whole in memory.
const largeObject = 1 << 20

// openShadowStorage opens the shadow repository at dir with a bounded object
// cache and lazy large objects.
func openShadowStorage(dir string) *filesystem.Storage {
	return filesystem.NewStorageWithOptions(osfs.New(dir), cache.NewObjectLRU(16<<20),
		filesystem.Options{LargeObjectThreshold: largeObject})
}

// writePack writes a version 2 packfile of hashes to w, every object whole
// (no delta search) and streamed: read from st, deflated and written one at a
// time, so memory holds a copy buffer and the zlib state, never an object.
// (go-git's packfile.Encoder first loads every object it packs, so a large
// file of a checkpoint would be held whole.)
func writePack(w io.Writer, st storer.EncodedObjectStorer, hashes []plumbing.Hash) error {
	sum := sha1.New()
	out := io.MultiWriter(w, sum)
	var head [12]byte
	copy(head[:], "PACK")
	binary.BigEndian.PutUint32(head[4:], 2)
	binary.BigEndian.PutUint32(head[8:], uint32(len(hashes)))
	if _, err := out.Write(head[:]); err != nil {
		return err
	}
	zw := zlib.NewWriter(out)
	buf := make([]byte, 64<<10)
	for _, h := range hashes {
		if err := packObject(out, zw, buf, st, h); err != nil {
			return err
		}
	}
	_, err := w.Write(sum.Sum(nil))
	return err
}

// packObject writes one object's entry: its type and size, then its deflated content.
func packObject(out io.Writer, zw *zlib.Writer, buf []byte, st storer.EncodedObjectStorer, h plumbing.Hash) error {
	o, err := st.EncodedObject(plumbing.AnyObject, h)
	if err != nil {
		return fmt.Errorf("object %s: %w", h, err)
	}
	switch o.Type() {
	case plumbing.CommitObject, plumbing.TreeObject, plumbing.BlobObject, plumbing.TagObject:
	default:
		return fmt.Errorf("object %s: type %s cannot be packed whole", h, o.Type())
	}
	if _, err := out.Write(entryHeader(o.Type(), o.Size())); err != nil {
		return err
	}
	r, err := o.Reader()
	if err != nil {
		return fmt.Errorf("object %s: %w", h, err)
	}
	defer r.Close()
	zw.Reset(out)
	n, err := io.CopyBuffer(zw, r, buf)
	if err != nil {
		return fmt.Errorf("object %s: %w", h, err)
	}
	if n != o.Size() {
		return fmt.Errorf("object %s: read %d bytes of %d", h, n, o.Size())
	}
	return zw.Close()
}

// entryHeader is a pack entry's header: the type in bits 4-6 of the first
// byte, the size in its low 4 bits then 7 bits a byte, least significant first.
func entryHeader(t plumbing.ObjectType, size int64) []byte {
	b := []byte{byte(t)<<4 | byte(size&0x0f)}
	size >>= 4
	for size > 0 {
		b[len(b)-1] |= 0x80
		b = append(b, byte(size&0x7f))
		size >>= 7
	}
	return b
}

// storePack copies the packfile r (size bytes, its index idx) into st's
// objects/pack as pack-<checksum>.pack and .idx, each written to a temp file
// and renamed, the index last, then makes st read its packs again.
func storePack(st *filesystem.Storage, r io.Reader, size int64, idx *idxfile.MemoryIndex) error {
	fs := st.Filesystem()
	dir := fs.Join("objects", "pack")
	if err := fs.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	name := fs.Join(dir, "pack-"+hex.EncodeToString(idx.PackfileChecksum[:]))
	tail := &lastBytes{n: sha1.Size}
	if err := writeTemp(fs, dir, name+".pack", func(w io.Writer) error {
		n, err := io.Copy(io.MultiWriter(w, tail), io.LimitReader(r, size))
		if err == nil && n != size {
			err = io.ErrUnexpectedEOF
		}
		return err
	}); err != nil {
		return err
	}
	if !bytes.Equal(tail.b, idx.PackfileChecksum[:]) {
		fs.Remove(name + ".pack")
		return fmt.Errorf("bytes follow the packfile's checksum")
	}
	if err := writeTemp(fs, dir, name+".idx", func(w io.Writer) error {
		_, err := idxfile.NewEncoder(w).Encode(idx)
		return err
	}); err != nil {
		fs.Remove(name + ".pack")
		return err
	}
	st.Reindex()
	return nil
}

// writeTemp writes name through a temp file in dir, renamed into place when whole.
func writeTemp(fs billy.Filesystem, dir, name string, write func(io.Writer) error) error {
	f, err := fs.TempFile(dir, "tmp_pack_")
	if err != nil {
		return err
	}
	err = write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fs.Rename(f.Name(), name)
	}
	if err != nil {
		fs.Remove(f.Name())
	}
	return err
}

// lastBytes keeps the last n bytes written to it.
type lastBytes struct {
	n int
	b []byte
}

func (l *lastBytes) Write(p []byte) (int, error) {
	l.b = append(l.b, p[max(0, len(p)-l.n):]...)
	if len(l.b) > l.n {
		l.b = append(l.b[:0], l.b[len(l.b)-l.n:]...)
	}
	return len(p), nil
}
