//go:build !linux

package checkpoint

import (
	"fmt"
	"os"
)

// dirLister lists directories with os.ReadDir where getdents64 is not there.
type dirLister struct{ ents []dirEntry }

func newDirLister() *dirLister { return &dirLister{} }

// list lists the directory abs, each name with its type and prefix put in front
// of it in path. The entries are valid until the next list; the strings stay valid.
func (l *dirLister) list(abs, prefix string) (dirHandle, []dirEntry, error) {
	entries, err := os.ReadDir(abs)
	if err != nil {
		return dirHandle{fd: -1}, nil, fmt.Errorf("%s: cannot list the directory: %w", abs, err)
	}
	l.ents = l.ents[:0]
	for _, e := range entries {
		p := prefix + e.Name()
		l.ents = append(l.ents, dirEntry{path: p, name: p[len(prefix):], key: sortKey(p[len(prefix):], e.Type()), kind: e.Type()})
	}
	return dirHandle{fd: -1}, l.ents, nil
}

// dirHandle is a listed directory; statAt does not use it on this platform.
type dirHandle struct{ fd int }

func (dirHandle) close() {}
