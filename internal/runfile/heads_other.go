//go:build !unix

package runfile

import "path/filepath"

// Heads reads the heads of the files of one directory, by their paths.
type Heads struct {
	dir  string
	kind Kind
}

// OpenHeads prepares reading the heads of dir's files of the given kind.
func OpenHeads(dir string, kind Kind) *Heads { return &Heads{dir: dir, kind: kind} }

// Close does nothing here.
func (r *Heads) Close() {}

// Read returns at most len(buf) first bytes of the file name.
func (r *Heads) Read(name string, buf []byte) ([]byte, error) {
	return ReadHead(filepath.Join(r.dir, name), r.kind, len(buf))
}

// ReadListed is Read for a file its caller listed as a regular file.
func (r *Heads) ReadListed(name string, buf []byte) ([]byte, error) {
	return r.Read(name, buf)
}

// ReadListedAll is ReadListed for each of names, at most size bytes of each,
// calling f(i, head, err) for each in order.
func (r *Heads) ReadListedAll(names []string, size int, f func(i int, head []byte, err error)) {
	buf := make([]byte, size)
	for i, name := range names {
		head, err := r.ReadListed(name, buf)
		f(i, head, err)
	}
}
