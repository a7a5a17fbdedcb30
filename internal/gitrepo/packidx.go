package gitrepo

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/replaytool/replay/internal/runfile"
)

// PackIndex is a version 2 pack index looked up in place, in its file's bytes (a
// read-only mapping on Linux), instead of decoded into memory: a snapshot asks
// a few hundred lookups of indexes of a hundred thousand objects, and decoding
// them cost more (fresh memory is page faults, each dear in a VM) than it saved.
type PackIndex struct {
	data    []byte
	n       int
	names   int // where the object names start; then n CRCs, n offsets, the large offsets
	offsets int
	large   int
}

// Offsets of a version 2 index: the magic and version, then the fanout table.
const (
	idxHeader    = 8
	idxFanoutEnd = idxHeader + 256*4
)

// ErrBadPackIndex says a file is not a whole version 2 pack index.
var ErrBadPackIndex = errors.New("malformed pack index")

// NewPackIndex checks data is a whole version 2 index (its layout, and its SHA-1
// trailer as go-git's decoder checks it) and returns it.
func NewPackIndex(data []byte) (*PackIndex, error) {
	if len(data) < idxFanoutEnd+2*20 || !bytes.Equal(data[:idxHeader], []byte{0xff, 't', 'O', 'c', 0, 0, 0, 2}) {
		return nil, ErrBadPackIndex
	}
	prev := uint32(0)
	for i := range 256 {
		v := binary.BigEndian.Uint32(data[idxHeader+4*i:])
		if v < prev {
			return nil, ErrBadPackIndex
		}
		prev = v
	}
	n := int64(prev)
	min := int64(idxFanoutEnd) + n*(20+4+4) + 2*20
	if int64(len(data)) < min || (int64(len(data))-min)%8 != 0 {
		return nil, ErrBadPackIndex
	}
	body := len(data) - 20
	if sum := sha1.Sum(data[:body]); !bytes.Equal(sum[:], data[body:]) {
		return nil, ErrBadPackIndex
	}
	r := &PackIndex{data: data, n: int(n), names: idxFanoutEnd}
	r.offsets = r.names + r.n*(20+4)
	r.large = r.offsets + r.n*4
	return r, nil
}

func (r *PackIndex) fanout(b int) int {
	if b < 0 {
		return 0
	}
	return int(binary.BigEndian.Uint32(r.data[idxHeader+4*b:]))
}

// FindOffset returns where h's entry starts in the pack; plumbing.ErrObjectNotFound
// when the pack does not hold it.
func (r *PackIndex) FindOffset(h plumbing.Hash) (int64, error) {
	off, err := r.findOffset(h)
	// A mapped index is unmapped once r is collected: r stays reachable until
	// every read of its bytes is done.
	runtime.KeepAlive(r)
	return off, err
}

func (r *PackIndex) findOffset(h plumbing.Hash) (int64, error) {
	lo, hi := r.fanout(int(h[0])-1), r.fanout(int(h[0]))
	i := lo + sort.Search(hi-lo, func(j int) bool {
		at := r.names + (lo+j)*20
		return bytes.Compare(r.data[at:at+20], h[:]) >= 0
	})
	if i >= hi || !bytes.Equal(r.data[r.names+i*20:r.names+i*20+20], h[:]) {
		return 0, plumbing.ErrObjectNotFound
	}
	off := binary.BigEndian.Uint32(r.data[r.offsets+i*4:])
	if off&0x80000000 == 0 {
		return int64(off), nil
	}
	at := r.large + int(off&0x7fffffff)*8
	if at+8 > len(r.data)-40 {
		return 0, ErrBadPackIndex
	}
	return int64(binary.BigEndian.Uint64(r.data[at:])), nil
}

// readPackIndex reads the pack index at path into memory and checks it.
func readPackIndex(path string) (*PackIndex, error) {
	if err := checkPackIndexFile(path); err != nil {
		return nil, err
	}
	data, err := runfile.ReadFileNoFollow(path, packIndexKind)
	if err != nil {
		return nil, err
	}
	r, err := NewPackIndex(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}
