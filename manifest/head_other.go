//go:build !unix

package manifest

import (
	"path/filepath"

	"github.com/replaytool/replay/internal/runfile"
)

// headReader reads the heads of the files of one directory, by their paths.
type headReader struct{ dir string }

func openHeadReader(dir string) *headReader { return &headReader{dir: dir} }

func (r *headReader) close() {}

// read returns at most len(buf) first bytes of the file name.
func (r *headReader) read(name string, buf []byte) ([]byte, error) {
	return runfile.ReadHead(filepath.Join(r.dir, name), runfile.Dispatch, len(buf))
}
