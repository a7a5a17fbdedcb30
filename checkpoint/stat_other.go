//go:build !linux

package checkpoint

import (
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// statExtra is what the git index records about a file beyond size and mtime.
type statExtra struct {
	ctime              time.Time
	dev, ino, uid, gid uint32
}

func extraOf(info fs.FileInfo) statExtra { return statExtra{ctime: info.ModTime()} }

// oNoFollow is 0 where the platform has no O_NOFOLLOW; writes still never follow a
// symlink because the path is removed and created with O_EXCL.
const oNoFollow = 0

// oNonBlock is 0 where the platform has no O_NONBLOCK.
const oNonBlock = 0

// statAt lstats name in the directory abs (dirfd is not used on this platform).
func statAt(_ int, abs, name string) (entryStat, error) {
	info, err := os.Lstat(filepath.Join(abs, name))
	if err != nil {
		return entryStat{}, err
	}
	return entryStat{kind: info.Mode().Type(), size: info.Size(), mtime: info.ModTime().UnixNano(), exec: info.Mode()&0o100 != 0, extra: extraOf(info)}, nil
}

// singleLink reports whether the file info describes has no other hard link; never
// known here, so a restore always replaces a file instead of rewriting it.
func singleLink(fs.FileInfo) bool { return false }
