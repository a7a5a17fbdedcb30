package gitrepo

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/replaytool/replay/internal/platform"
	"github.com/replaytool/replay/internal/runfile"
)

// MaxPackIndex bounds a pack index replay opens: 512 MiB describe about 15
// million objects, far more than a checkpoint repository holds. A larger one (a
// sparse file of gigabytes planted in a shadow) would be mapped or read whole.
const MaxPackIndex = 512 << 20

// packIndexKind is how replay reads a pack index: a regular file within MaxPackIndex.
var packIndexKind = runfile.Kind{What: "pack index", Max: MaxPackIndex}

// CheckPackDir proves the pack directory of the repository at gitDir holds only
// what git puts there, before go-git, the lean pack reader or replay's own reader
// opens anything in it: every entry a regular file (a FIFO would make the open
// wait forever, a link lead to /dev/zero or another repository's pack), and every
// version 2 index no larger than MaxPackIndex and exactly the size its fan-out
// table says (a sparse file of gigabytes is refused after reading its first
// kilobyte). A missing directory passes. The error names the file.
func CheckPackDir(gitDir string) error {
	dir := filepath.Join(gitDir, filepath.FromSlash(packDir))
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		if !e.Type().IsRegular() {
			return fmt.Errorf("%s is %s, not a pack file (a FIFO would be waited on forever, a link followed anywhere); remove it", path, platform.DescribeMode(e.Type()))
		}
		if strings.HasSuffix(e.Name(), ".idx") {
			if err := checkPackIndexFile(path); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkPackIndexFile opens the index at path as replay reads pack indexes (no
// link, no wait, within MaxPackIndex) and checks its size against its fan-out.
func checkPackIndexFile(path string) error {
	f, err := runfile.OpenNoFollow(path, packIndexKind)
	if err != nil {
		return err
	}
	defer f.Close()
	return checkIndexSize(f, f.Stat().Size(), path)
}

// checkIndexSize refuses a version 2 pack index whose size is not the one its
// fan-out table gives (names, CRCs and offsets of n objects, at most n large
// offsets, two checksums), reading only its first kilobyte. An index of another
// version is left to its reader.
func checkIndexSize(r io.ReaderAt, size int64, path string) error {
	if size > MaxPackIndex {
		return fmt.Errorf("%s is %d bytes, larger than any pack index of a checkpoint repository (%d): the repository is damaged; remove it", path, size, int64(MaxPackIndex))
	}
	var head [idxFanoutEnd]byte
	if _, err := r.ReadAt(head[:], 0); err != nil {
		return fmt.Errorf("%s: %w: %v", path, ErrBadPackIndex, err)
	}
	if string(head[:idxHeader]) != "\xfftOc\x00\x00\x00\x02" {
		return nil
	}
	n := int64(binary.BigEndian.Uint32(head[idxFanoutEnd-4:]))
	min := int64(idxFanoutEnd) + n*(20+4+4) + 2*20
	if size < min || size > min+8*n {
		return fmt.Errorf("%s is %d bytes, but its fan-out names %d objects (%d to %d bytes): %w; remove it", path, size, n, min, min+8*n, ErrBadPackIndex)
	}
	return nil
}
