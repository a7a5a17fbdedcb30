//go:build linux || openbsd || dragonfly || solaris || illumos

package platform

import (
	"io/fs"
	"syscall"
	"time"
)

// FileStat returns the stat data of info (from os.Stat, os.Lstat or a File's
// Stat); ok is false when the system gives none.
func FileStat(info fs.FileInfo) (Stat, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return Stat{}, false
	}
	return Stat{Dev: uint64(st.Dev), Ino: uint64(st.Ino), UID: st.Uid, GID: st.Gid, Ctime: time.Unix(st.Ctim.Unix())}, true
}
