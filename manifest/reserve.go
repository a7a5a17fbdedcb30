package manifest

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/replaytool/replay/internal/safewrite"
)

// AppendNextFrom takes the next free seq of the dispatch directory holding
// manifestPath and appends the entry build makes for it, both under the manifest's
// lock, so concurrent writers (two replays of one pipeline) never take the same seq.
// A torn last line is first moved to TornSidecar, and the line follows the
// manifest's Convention, as AppendEntry does. The seq taken is at least floor, the
// next seq the caller knows of from the run's other copies (a live dispatch
// directory that moved on beyond a durable one), so no seq used there is reused.
func AppendNextFrom(manifestPath string, floor int, build func(seq int) (Entry, error)) (Entry, error) {
	var out Entry
	err := safewrite.WithLock(manifestPath, func(f *os.File) error {
		if _, err := setAsideTornTail(f, manifestPath); err != nil {
			return err
		}
		seq, err := NextSeq(filepath.Dir(manifestPath))
		if err != nil {
			return err
		}
		seq = max(seq, floor)
		e, err := build(seq)
		if err != nil {
			return err
		}
		conv, err := conventionOf(f)
		if err != nil {
			return fmt.Errorf("%s: cannot read its first lines: %w", manifestPath, err)
		}
		e = conv.Shape(e)
		line, err := EncodeLine(e)
		if err != nil {
			return fmt.Errorf("%s: %w", manifestPath, err)
		}
		out = e
		return safewrite.AppendLocked(f, manifestPath, line)
	})
	return out, err
}
