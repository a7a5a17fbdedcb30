//go:build !linux

package gitrepo

import (
	"os"

	"github.com/go-git/go-billy/v5"
)

// lean returns nil: without openat2 every open goes to the wrapped file system.
func (l leanFS) lean(string, int) (billy.File, error) { return nil, nil }

// leanStat returns nil: without openat2 every Stat goes to the wrapped file system.
func (l leanFS) leanStat(string) (os.FileInfo, error) { return nil, nil }
