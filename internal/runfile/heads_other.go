//go:build !unix

package runfile

import "path/filepath"

// Heads reads the heads of the files of one directory, by their paths.
type Heads struct {
	dir  string
	kind Kind
	fd   int // always -1: each file is read by its path
}

// OpenHeads prepares reading the heads of dir's files of the given kind.
func OpenHeads(dir string, kind Kind) *Heads { return &Heads{dir: dir, kind: kind, fd: -1} }

// Close does nothing here.
func (r *Heads) Close() {}

// ReadListed returns at most len(buf) first bytes of the file name, read by its
// path with ReadHead's checks.
func (r *Heads) ReadListed(name string, buf []byte) ([]byte, error) {
	return ReadHead(filepath.Join(r.dir, name), r.kind, len(buf))
}

// oNonBlock is 0 where the system has no O_NONBLOCK.
const oNonBlock = 0
