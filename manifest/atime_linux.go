package manifest

import (
	"io/fs"
	"syscall"
	"time"
)

// atimeOf returns the access time of info, its modification time when unknown.
func atimeOf(info fs.FileInfo) time.Time {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return time.Unix(st.Atim.Sec, st.Atim.Nsec)
	}
	return info.ModTime()
}
