package checkpoint

import (
	"bufio"
	"compress/zlib"
	"errors"
	"io"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/replaytool/replay/internal/gitrepo"
)

// errDeltaEntry says a pack entry is a delta (a pack made by `git gc`), which only
// go-git's storage reads.
var errDeltaEntry = errors.New("delta pack entry")

// inflater is a pack entry's reader state, pooled: a zlib reader allocates and
// initialises a 32 KB window, which cost a restore (1,000 objects read) more than
// the inflating itself.
type inflater struct {
	br *bufio.Reader
	zr io.ReadCloser // a zlib reader, which is also a zlib.Resetter
}

var inflaterPool sync.Pool

// readPackEntry reads the entry header at off of a pack (or batch body) and returns
// a reader of its inflated content; closing it closes c too.
func readPackEntry(ra io.ReaderAt, off int64, c io.Closer) (plumbing.ObjectType, int64, io.ReadCloser, error) {
	sr := io.NewSectionReader(ra, off, 1<<62)
	in, _ := inflaterPool.Get().(*inflater)
	if in == nil {
		in = &inflater{br: bufio.NewReaderSize(sr, 4096)}
	} else {
		in.br.Reset(sr)
	}
	t, size, err := readEntryHeader(in.br)
	if err == nil {
		if in.zr == nil {
			in.zr, err = zlib.NewReader(in.br)
		} else {
			err = in.zr.(zlib.Resetter).Reset(in.br, nil)
		}
	}
	if err != nil {
		in.br.Reset(nil)
		inflaterPool.Put(in)
		return 0, 0, nil, err
	}
	return t, size, &entryReader{Reader: io.LimitReader(in.zr, size), in: in, c: c}, nil
}

// readEntryHeader reads the type and size of a pack entry (see packEntryHeader);
// the error wraps errDeltaEntry for a delta.
func readEntryHeader(br io.ByteReader) (plumbing.ObjectType, int64, error) {
	t, size, err := gitrepo.ReadPackEntryHeader(br)
	if err != nil {
		return 0, 0, err
	}
	switch t {
	case plumbing.CommitObject, plumbing.TreeObject, plumbing.BlobObject, plumbing.TagObject:
		return t, size, nil
	}
	return 0, 0, errDeltaEntry
}

// entryReader closes the zlib stream of a pack entry, which goes back to the pool,
// and the pack file.
type entryReader struct {
	io.Reader
	in *inflater
	c  io.Closer
}

// eofReader is what a closed entryReader reads.
type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

func (r *entryReader) Close() error {
	if r.in == nil {
		return nil // closed already
	}
	err := r.in.zr.Close()
	r.in.br.Reset(nil)
	inflaterPool.Put(r.in)
	r.in, r.Reader = nil, eofReader{}
	if r.c != nil {
		if cerr := r.c.Close(); err == nil {
			err = cerr
		}
	}
	return err
}
