package checkpoint

import (
	"errors"
	"io/fs"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// statExtra is what the git index records about a file beyond size and mtime.
type statExtra struct {
	ctime              time.Time
	dev, ino, uid, gid uint32
}

func extraOf(info fs.FileInfo) statExtra {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return statExtra{}
	}
	return statExtra{
		ctime: time.Unix(st.Ctim.Sec, st.Ctim.Nsec),
		dev:   uint32(st.Dev), ino: uint32(st.Ino), uid: st.Uid, gid: st.Gid,
	}
}

// oNoFollow makes an open fail rather than follow a symlink in the last component.
const oNoFollow = syscall.O_NOFOLLOW

// oNonBlock makes opening a FIFO that replaced a file since the walk return at once
// instead of waiting for a writer; it changes nothing for regular files.
const oNonBlock = syscall.O_NONBLOCK

// statAt lstats name in the directory abs, open as the descriptor dirfd: the kernel
// resolves one name under the descriptor instead of the whole path from the root,
// which is most of the cost of a snapshot's walk over a large tree.
func statAt(dirfd int, abs, name string) (entryStat, error) {
	var st unix.Stat_t
	for {
		err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return entryStat{}, &fs.PathError{Op: "lstat", Path: filepath.Join(abs, name), Err: err}
		}
		break
	}
	return entryStat{
		kind:  kindOf(st.Mode),
		size:  st.Size,
		mtime: st.Mtim.Nano(),
		exec:  st.Mode&0o100 != 0,
		extra: statExtra{
			ctime: time.Unix(st.Ctim.Sec, st.Ctim.Nsec),
			dev:   uint32(st.Dev), ino: uint32(st.Ino), uid: st.Uid, gid: st.Gid,
		},
	}, nil
}

// kindOf is the type bits of a stat mode, as fs.FileMode.
func kindOf(mode uint32) fs.FileMode {
	switch mode & unix.S_IFMT {
	case unix.S_IFREG:
		return 0
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFLNK:
		return fs.ModeSymlink
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	case unix.S_IFSOCK:
		return fs.ModeSocket
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		return fs.ModeDevice
	}
	return fs.ModeIrregular
}

// singleLink reports whether the file info describes has no other hard link.
func singleLink(info fs.FileInfo) bool {
	st, ok := info.Sys().(*syscall.Stat_t)
	return ok && st.Nlink == 1
}
