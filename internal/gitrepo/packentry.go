package gitrepo

import (
	"bufio"
	"compress/zlib"
	"errors"
	"io"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
)

// ErrDeltaEntry says a pack entry is a delta (a pack made by `git gc`), which only
// go-git's storage reads.
var ErrDeltaEntry = errors.New("delta pack entry")

// inflate makes *zr a zlib reader of r: a new one the first time, the same one
// reset after. It is the one inflater of the package (the standard library's
// compress/zlib, as go-git's): a zlib reader allocates and initialises a 32 KB
// window, which cost a restore (1,000 objects read) more than the inflating itself,
// so callers keep theirs. On an error *zr is left nil.
func inflate(zr *io.ReadCloser, r io.Reader) error {
	var err error
	if *zr == nil {
		*zr, err = zlib.NewReader(r)
	} else {
		err = (*zr).(zlib.Resetter).Reset(r, nil)
	}
	if err != nil {
		*zr = nil
	}
	return err
}

// entryInflater is a streamed pack entry's reader state, pooled.
type entryInflater struct {
	br *bufio.Reader
	zr io.ReadCloser
}

var entryInflaters sync.Pool

// OpenPackEntry reads the header of the whole (undeltified) pack entry at off of ra
// (a pack file, or the body of a batch of entries) and returns its type, its size
// and a reader of its inflated content, which streams: a large blob is never held
// whole. Closing the reader closes c too (nil: nothing to close). A delta entry is
// an error wrapping ErrDeltaEntry.
func OpenPackEntry(ra io.ReaderAt, off int64, c io.Closer) (plumbing.ObjectType, int64, io.ReadCloser, error) {
	sr := io.NewSectionReader(ra, off, 1<<62)
	in, _ := entryInflaters.Get().(*entryInflater)
	if in == nil {
		in = &entryInflater{br: bufio.NewReaderSize(sr, 4096)}
	} else {
		in.br.Reset(sr)
	}
	t, size, err := ReadPackEntryHeader(in.br)
	if err == nil {
		switch t {
		case plumbing.CommitObject, plumbing.TreeObject, plumbing.BlobObject, plumbing.TagObject:
			err = inflate(&in.zr, in.br)
		default:
			err = ErrDeltaEntry
		}
	}
	if err != nil {
		in.br.Reset(nil)
		entryInflaters.Put(in)
		return 0, 0, nil, err
	}
	return t, size, &entryReader{Reader: io.LimitReader(in.zr, size), in: in, c: c}, nil
}

// entryReader closes the zlib stream of a pack entry, which goes back to the pool,
// and the pack file.
type entryReader struct {
	io.Reader
	in *entryInflater
	c  io.Closer
}

// eofReader is what a closed entryReader reads.
type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

// Close gives the entry's reader state back (once: a second Close does nothing)
// and closes the pack file the entry was opened with.
func (r *entryReader) Close() error {
	if r.in == nil {
		return nil // closed already
	}
	err := r.in.zr.Close()
	r.in.br.Reset(nil)
	entryInflaters.Put(r.in)
	r.in, r.Reader = nil, eofReader{}
	if r.c != nil {
		if cerr := r.c.Close(); err == nil {
			err = cerr
		}
	}
	return err
}
