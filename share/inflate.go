package share

import (
	"errors"
	"fmt"
	"io"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
)

// Bounds of a checkpoint packfile's inflation, checked before git stores it:
// a pack from a store may be a decompression bomb (a few MB of zlib or of
// deltas that copy one region over and over, inflating to gigabytes).
const (
	// maxInflateRatio is above zlib's own limit (about 1032:1), so no pack
	// of whole objects is refused for compressing well; deltas amplifying
	// past it are.
	maxInflateRatio = 1100
	// minInflateAllowance lets a small pack inflate this much whatever its ratio.
	minInflateAllowance = 64 << 20
	// maxInflateTotal bounds a pack's objects together, maxInflateObject one of them.
	maxInflateTotal  = 32 << 30
	maxInflateObject = 1 << 30
	// maxPackObjects bounds a pack's object count.
	maxPackObjects = 50_000_000
)

var errInflate = errors.New("the packfile inflates past its bounds")

// checkPack reads the packfile r (packSize bytes) once and refuses it when an
// object, or all of them together, would inflate past the bounds: a whole
// object by its declared size (the inflation itself is cut at that size), a
// delta by the size of the object it makes (read from the delta's header).
func checkPack(r io.Reader, packSize int64) error {
	allowed := min(max(int64(minInflateAllowance), packSize*maxInflateRatio), maxInflateTotal)
	sc := packfile.NewScanner(r)
	_, count, err := sc.Header()
	if err != nil {
		return fmt.Errorf("bundle packfile: %w", err)
	}
	if count > maxPackObjects {
		return fmt.Errorf("bundle packfile: %d objects, more than %d", count, maxPackObjects)
	}
	var total int64
	for i := uint32(0); i < count; i++ {
		oh, err := sc.NextObjectHeader()
		if err != nil {
			return fmt.Errorf("bundle packfile: object %d: %w", i, err)
		}
		size := oh.Length
		if oh.Type == plumbing.OFSDeltaObject || oh.Type == plumbing.REFDeltaObject {
			d := &deltaHeader{}
			if _, _, err := sc.NextObject(d); err != nil && !errors.Is(err, errDeltaRead) {
				return fmt.Errorf("bundle packfile: object %d: %w", i, err)
			}
			if !d.done {
				return fmt.Errorf("bundle packfile: object %d: a delta without a header", i)
			}
			size = d.target
		} else {
			if size > maxInflateObject || total+size > allowed {
				return inflateError(i, size, total, allowed, packSize)
			}
			if _, _, err := sc.NextObject(io.Discard); err != nil {
				return fmt.Errorf("bundle packfile: object %d: %w", i, err)
			}
		}
		if size > maxInflateObject || total+size > allowed {
			return inflateError(i, size, total, allowed, packSize)
		}
		total += size
	}
	return nil
}

func inflateError(i uint32, size, total, allowed, packSize int64) error {
	return fmt.Errorf("%w: object %d inflates to %d bytes (%d before it) from a %d-byte pack (at most %d bytes in all, %d for one object): it is a decompression bomb, or a checkpoint too large to share",
		errInflate, i, size, total, packSize, allowed, int64(maxInflateObject))
}

var errDeltaRead = errors.New("delta header read")

// deltaHeader takes the first bytes of an inflating delta: its source and
// target sizes (two varints), then stops the inflation.
type deltaHeader struct {
	buf    []byte
	target int64
	done   bool
}

func (d *deltaHeader) Write(p []byte) (int, error) {
	d.buf = append(d.buf, p[:min(len(p), 32-len(d.buf))]...)
	pos := 0
	if _, ok := varint(d.buf, &pos); !ok {
		return d.more(p)
	}
	t, ok := varint(d.buf, &pos)
	if !ok {
		return d.more(p)
	}
	d.target, d.done = t, true
	return 0, errDeltaRead
}

func (d *deltaHeader) more(p []byte) (int, error) {
	if len(d.buf) >= 32 {
		return 0, fmt.Errorf("a delta header longer than 32 bytes")
	}
	return len(p), nil
}

// varint reads git's little-endian base-128 size at *pos.
func varint(b []byte, pos *int) (int64, bool) {
	var v int64
	for shift := uint(0); *pos < len(b) && shift < 63; shift += 7 {
		c := b[*pos]
		*pos++
		v |= int64(c&0x7f) << shift
		if c&0x80 == 0 {
			return v, true
		}
	}
	return 0, false
}
