package gitrepo

import (
	"fmt"
	"math"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// OpenPackIndex maps the pack index at path read-only (its pages filled in at
// once: one call instead of a fault a page) and checks it; a file that cannot be
// mapped is read.
// The mapping is released when the index is no longer used. Pack indexes are
// never rewritten in place (written to a temporary file, renamed, read-only).
func OpenPackIndex(path string) (*PackIndex, error) {
	if err := checkPackIndexFile(path); err != nil { // no FIFO, link or sparse giant mapped
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if info.Size() <= 0 || info.Size() > math.MaxInt32 {
		return readPackIndex(path)
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(info.Size()), unix.PROT_READ, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return readPackIndex(path)
	}
	r, err := NewPackIndex(data)
	if err != nil {
		unix.Munmap(data)
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	runtime.AddCleanup(r, func(d []byte) { unix.Munmap(d) }, data)
	return r, nil
}
