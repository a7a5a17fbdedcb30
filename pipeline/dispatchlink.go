package pipeline

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// linkedDispatchDir refuses a dispatch directory that is a symbolic link the
// run holds (its name inside the scratch dir or TMPDIR leads elsewhere: to
// ~/.claude/commands, say), so a resume or an A/B replay never writes a
// dispatch file, manifest line or recording through it. A directory the user
// named as PATH is the user's own and is followed. Reads are not refused: a
// plan warns.
func linkedDispatchDir(dir string, o Options) error {
	if dir == "" {
		return nil
	}
	st, err := os.Lstat(dir)
	if err != nil || st.Mode()&fs.ModeSymlink == 0 {
		return nil
	}
	if o.Path != "" {
		named := o.Path
		if !filepath.IsAbs(named) {
			named = filepath.Join(o.Cwd, named)
		}
		if filepath.Clean(named) == filepath.Clean(dir) {
			return nil
		}
	}
	target, _ := os.Readlink(dir)
	return fmt.Errorf("the dispatch directory %s is a symbolic link (to %q): replay never writes a run's files through a link it holds, which could lead anywhere; replace the link by the directory it names, or give that directory as PATH (nothing was written)", dir, target)
}
