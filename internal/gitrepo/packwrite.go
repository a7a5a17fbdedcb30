package gitrepo

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"hash"
	"io"
	"os"

	"github.com/go-git/go-git/v5/plumbing"
)

// replay writes packs of one kind only: version 2, every entry a whole object
// (no delta), each deflated at BestSpeed by ZlibWriter. Two writers use them: the
// checkpoint store's pack of a snapshot's small objects (whose count is known only
// at the end: EncodePackEntry, then FinishPack over the file), and the bundle of a
// push (streamed, the count known first: PackWriter). Both go through the one
// header, entry header and checksum below.

// PackHeaderSize is the size of a pack's header: "PACK", the version, the count.
const PackHeaderSize = 12

// PackHeader returns the header of a version 2 pack of count objects.
func PackHeader(count uint32) [PackHeaderSize]byte {
	var h [PackHeaderSize]byte
	copy(h[:], "PACK")
	binary.BigEndian.PutUint32(h[4:], 2)
	binary.BigEndian.PutUint32(h[8:], count)
	return h
}

// AppendPackEntryHeader appends the header of a whole pack entry to dst: the type
// in bits 4-6 of the first byte, the size in its low 4 bits then 7 bits a byte,
// least significant first, the high bit of each byte but the last set.
func AppendPackEntryHeader(dst []byte, t plumbing.ObjectType, size int64) []byte {
	c := byte(t)<<4 | byte(size&0x0f)
	size >>= 4
	for size > 0 {
		dst = append(dst, c|0x80)
		c = byte(size & 0x7f)
		size >>= 7
	}
	return append(dst, c)
}

// packable reports whether objects of type t can be written whole into a pack.
func packable(t plumbing.ObjectType) bool {
	switch t {
	case plumbing.CommitObject, plumbing.TreeObject, plumbing.BlobObject, plumbing.TagObject:
		return true
	}
	return false
}

// EncodePackEntry appends the pack entry of a whole object (its header and its
// deflated content) to dst.
func EncodePackEntry(dst *bytes.Buffer, t plumbing.ObjectType, data []byte) error {
	if !packable(t) {
		return fmt.Errorf("type %s cannot be packed whole", t)
	}
	var hb [10]byte
	dst.Write(AppendPackEntryHeader(hb[:0], t, int64(len(data))))
	zw := ZlibWriter(dst)
	defer PutZlibWriter(zw)
	if _, err := zw.Write(data); err != nil {
		return err
	}
	return zw.Close()
}

// FinishPack completes a pack written into f with any count in its header and its
// entries up to offset end: it writes count into the header and appends the
// checksum of everything (read back, from the page cache), which it returns.
// buf is a copy buffer.
func FinishPack(f *os.File, count uint32, end int64, buf []byte) (plumbing.Hash, error) {
	var checksum plumbing.Hash
	var c [4]byte
	binary.BigEndian.PutUint32(c[:], count)
	if _, err := f.WriteAt(c[:], 8); err != nil {
		return checksum, err
	}
	sum := sha1.New()
	if _, err := io.CopyBuffer(sum, io.NewSectionReader(f, 0, end), buf); err != nil {
		return checksum, err
	}
	copy(checksum[:], sum.Sum(nil))
	if _, err := f.WriteAt(checksum[:], end); err != nil {
		return checksum, err
	}
	return checksum, nil
}

// PackWriter streams a pack of a known number of whole objects to a writer: the
// header first, each object read and deflated as it is written (memory holds a
// copy buffer and the zlib state, never an object), the checksum on Close.
type PackWriter struct {
	w     io.Writer
	sum   hash.Hash
	out   io.Writer // w and sum
	count uint32
	n     uint32
	buf   []byte
}

// NewPackWriter writes the header of a pack of count objects to w and returns
// the writer of its entries.
func NewPackWriter(w io.Writer, count uint32) (*PackWriter, error) {
	p := &PackWriter{w: w, sum: sha1.New(), count: count, buf: make([]byte, 64<<10)}
	p.out = io.MultiWriter(w, p.sum)
	h := PackHeader(count)
	if _, err := p.out.Write(h[:]); err != nil {
		return nil, err
	}
	return p, nil
}

// WriteObject writes one entry: an object of type t and size bytes, read from r.
func (p *PackWriter) WriteObject(t plumbing.ObjectType, size int64, r io.Reader) error {
	if !packable(t) {
		return fmt.Errorf("type %s cannot be packed whole", t)
	}
	if p.n == p.count {
		return fmt.Errorf("pack of %d objects: one more written", p.count)
	}
	var hb [10]byte
	if _, err := p.out.Write(AppendPackEntryHeader(hb[:0], t, size)); err != nil {
		return err
	}
	zw := ZlibWriter(p.out)
	defer PutZlibWriter(zw)
	n, err := io.CopyBuffer(zw, io.LimitReader(r, size+1), p.buf)
	if err != nil {
		return err
	}
	if n != size {
		return fmt.Errorf("read %d bytes of %d", n, size)
	}
	p.n++
	return zw.Close()
}

// Close writes the pack's checksum, after exactly the header's count of objects.
func (p *PackWriter) Close() error {
	if p.n != p.count {
		return fmt.Errorf("pack of %d objects: %d written", p.count, p.n)
	}
	_, err := p.w.Write(p.sum.Sum(nil))
	return err
}
