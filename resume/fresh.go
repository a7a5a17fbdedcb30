package resume

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/replaytool/replay/internal/safewrite"
	"github.com/replaytool/replay/manifest"
	"github.com/replaytool/replay/pipeline"
)

// ArchivedSuffix is inserted into an archived marker's name: .pipeline-active
// becomes .pipeline-active.archived-<session>.
const ArchivedSuffix = ".archived-"

// ArchiveMarkers starts a pipeline fresh: it renames the scratch dir's
// .pipeline-active and the session's .dispatch-active-<sid> so that the pipeline no
// longer counts as crashed, deleting nothing. It returns each old and new path. A
// marker that is a symlink is renamed as the link itself (never followed), and an
// archive name already taken is an error before anything is renamed.
func ArchiveMarkers(pl *pipeline.Pipeline, session string) ([][2]string, error) {
	if pl.ScratchDir == "" {
		return nil, errors.New("starting fresh: the pipeline has no scratch directory, so there is no marker to archive; start the pipeline again from its skill")
	}
	names := []string{manifest.MarkerFile}
	if sid := pl.Location.SessionID; sid != "" {
		names = append(names, manifest.DispatchActivePrefix+sid)
	}
	var moves [][2]string
	for _, name := range names {
		from := filepath.Join(pl.ScratchDir, name)
		if _, err := os.Lstat(from); errors.Is(err, fs.ErrNotExist) {
			continue
		} else if err != nil {
			return nil, fmt.Errorf("starting fresh: %s: %w; nothing was changed", from, err)
		}
		to := from + ArchivedSuffix + session
		if _, err := os.Lstat(to); err == nil {
			return nil, fmt.Errorf("starting fresh: %s exists already; move it away and run again; nothing was changed", to)
		}
		moves = append(moves, [2]string{from, to})
	}
	for i, m := range moves {
		if err := safewrite.RenameIn(pl.ScratchDir, filepath.Base(m[0]), filepath.Base(m[1])); err != nil {
			for _, done := range moves[:i] {
				_ = safewrite.RenameIn(pl.ScratchDir, filepath.Base(done[1]), filepath.Base(done[0]))
			}
			return nil, fmt.Errorf("starting fresh: archiving %s: %w; nothing was changed", m[0], err)
		}
	}
	return moves, nil
}
