//go:build !linux

package checkpoint

import (
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/replaytool/replay/internal/platform"
)

// statExtra is what the git index records about a file beyond size and mtime.
type statExtra struct {
	ctime              time.Time
	dev, ino, uid, gid uint32
}

func extraOf(info fs.FileInfo) statExtra {
	st, ok := platform.FileStat(info)
	if !ok {
		return statExtra{ctime: info.ModTime()}
	}
	return statExtra{ctime: st.Ctime, dev: uint32(st.Dev), ino: uint32(st.Ino), uid: st.UID, gid: st.GID}
}

// oNoFollow makes an open fail rather than follow a symlink in the last component
// where the system has O_NOFOLLOW; 0 on Windows, where writes still never follow a
// symlink because the path is removed and created with O_EXCL.
const oNoFollow = platform.ONoFollow

// oNonBlock is O_NONBLOCK where the system has it, else 0.
const oNonBlock = platform.ONonBlock

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
