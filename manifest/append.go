package manifest

import (
	"fmt"
	"os"

	"github.com/replaytool/replay/internal/safewrite"
)

// Append writes e as one line at the end of the manifest at manifestPath (created
// when missing): compact JSON in the SPEC §2 field order, one write(2) of at most
// MaxLineBytes, under an exclusive advisory lock on the file, with O_APPEND, then
// fsync'd. When the file ends in a torn line without newline, the write starts with
// a newline so the new entry stands on its own line.
func Append(manifestPath string, e Entry) error {
	line, err := EncodeLine(e)
	if err != nil {
		return fmt.Errorf("%s: %w", manifestPath, err)
	}
	return safewrite.WithLock(manifestPath, func(f *os.File) error {
		return safewrite.AppendLocked(f, manifestPath, line)
	})
}
