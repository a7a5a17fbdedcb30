//go:build !(linux || openbsd || dragonfly || solaris || illumos || darwin || freebsd || netbsd)

package platform

import "io/fs"

// FileStat gives no stat data on this system (Windows has no inode or ctime in
// os.FileInfo): ok is false.
func FileStat(fs.FileInfo) (Stat, bool) { return Stat{}, false }
