package share

import (
	"bytes"
	"crypto/sha1"
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

	"github.com/replaytool/replay/internal/gitrepo"
)

// largeObject is the size above which the shadow repository's objects are
// read lazily, from disk, as they are packed or unpacked: never whole in memory.
const largeObject = 1 << 20

// openShadowStorage opens the shadow repository at dir with a bounded object
// cache and lazy large objects.
func openShadowStorage(dir string) *filesystem.Storage {
	return filesystem.NewStorageWithOptions(gitrepo.NoWaitFS(osfs.New(dir)), cache.NewObjectLRU(16<<20),
		filesystem.Options{LargeObjectThreshold: largeObject})
}

// writePack writes a version 2 packfile of hashes to w, every object whole
// (no delta search) and streamed by gitrepo.PackWriter: read from st, deflated
// and written one at a time, so memory holds a copy buffer and the zlib state,
// never an object. (go-git's packfile.Encoder first loads every object it
// packs, so a large file of a checkpoint would be held whole.)
func writePack(w io.Writer, st storer.EncodedObjectStorer, hashes []plumbing.Hash) error {
	pw, err := gitrepo.NewPackWriter(w, uint32(len(hashes)))
	if err != nil {
		return err
	}
	for _, h := range hashes {
		if err := packObject(pw, st, h); err != nil {
			return err
		}
	}
	return pw.Close()
}

// packObject writes one object's entry.
func packObject(pw *gitrepo.PackWriter, st storer.EncodedObjectStorer, h plumbing.Hash) error {
	o, err := st.EncodedObject(plumbing.AnyObject, h)
	if err != nil {
		return fmt.Errorf("object %s: %w", h, err)
	}
	r, err := o.Reader()
	if err != nil {
		return fmt.Errorf("object %s: %w", h, err)
	}
	defer r.Close()
	if err := pw.WriteObject(o.Type(), o.Size(), r); err != nil {
		return fmt.Errorf("object %s: %w", h, err)
	}
	return nil
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
