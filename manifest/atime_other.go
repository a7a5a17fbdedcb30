//go:build !linux

package manifest

import (
	"io/fs"
	"time"
)

// atimeOf returns the modification time of info: the access time is not read on
// this system.
func atimeOf(info fs.FileInfo) time.Time { return info.ModTime() }
