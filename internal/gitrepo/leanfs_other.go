//go:build !linux

package gitrepo

import (
	"os"

	"github.com/go-git/go-billy/v5"
)

// lean returns nil: without openat2 every open goes to the wrapped file system.
func (l leanFS) lean(string, int) billy.File { return nil }

// leanStat returns nil: without openat2 every Stat goes to the wrapped file system.
func (l leanFS) leanStat(string) os.FileInfo { return nil }
