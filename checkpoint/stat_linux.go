package checkpoint

import (
	"io/fs"
	"syscall"
	"time"
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
