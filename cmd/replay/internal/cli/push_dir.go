package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/replaytool/replay/internal/safewrite"
)

// makeStoreDir creates the directory a push goes to when --to names a local
// directory (a path or file:///dir) that does not exist yet, as `mkdir -p` would;
// an S3 URL is left alone. It says so on stderr.
func makeStoreDir(f *runEnv, url, cwd string) error {
	dir := absStorePath(url, cwd)
	if rest, ok := strings.CutPrefix(dir, "file://"); ok {
		dir = rest
	} else if strings.Contains(dir, "://") {
		return nil
	}
	if _, err := os.Lstat(dir); err == nil {
		return nil
	}
	if err := safewrite.MkdirAll(dir); err != nil {
		return fmt.Errorf("store %s: cannot create the directory: %w", dir, err)
	}
	f.Printer().Infof("created the store directory %s", dir)
	return nil
}
