package gitrepo

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/index"

	"github.com/replaytool/replay/internal/fsutil"
)

// go-git writes a loose ref and the index by truncating the file in place and
// writing it again: a process killed in between leaves an empty ref ("reference not
// found") or a torn index. WriteRef and WriteIndex write a temp file, fsync it and
// rename it over the old one, as the git binary does, so a crash leaves the old or
// the new content and nothing in between.

// WriteRef points the loose ref name of the git directory gitDir at h, atomically.
func WriteRef(gitDir string, name plumbing.ReferenceName, h plumbing.Hash) error {
	if err := name.Validate(); err != nil || !strings.HasPrefix(name.String(), "refs/") {
		return fmt.Errorf("%q is not a ref name replay writes", name)
	}
	return fsutil.WriteAtomic(filepath.Join(gitDir, filepath.FromSlash(name.String())), []byte(h.String()+"\n"))
}

// WriteIndex writes idx as the index of the git directory gitDir, atomically.
func WriteIndex(gitDir string, idx *index.Index) error {
	var buf bytes.Buffer
	if err := index.NewEncoder(&buf).Encode(idx); err != nil {
		return fmt.Errorf("encoding the index: %w", err)
	}
	return fsutil.WriteAtomic(filepath.Join(gitDir, "index"), buf.Bytes())
}

// GitDir returns the .git directory of the working tree at dir, or "" when dir has
// no .git directory (a bare repository, a linked worktree's .git file).
func GitDir(dir string) string {
	gd := filepath.Join(dir, ".git")
	if st, err := os.Stat(gd); err == nil && st.IsDir() {
		return gd
	}
	return ""
}
