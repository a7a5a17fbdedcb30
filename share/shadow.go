package share

import (
	"bytes"
	"fmt"
	"os"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// unbundleShadow makes dir a shadow checkpoint repository from a bundle: bare
// storage (nothing is written into the project), core.worktree = repo,
// gc.auto = 0, the bundle's refs, and HEAD on head when the bundle has it.
func unbundleShadow(dir string, bundle []byte, head, repo string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	st := filesystem.NewStorage(osfs.New(dir), cache.NewObjectLRUDefault())
	defer st.Close()
	r, err := git.InitWithOptions(st, nil, git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName("main")})
	if err != nil {
		return fmt.Errorf("init: %w", err)
	}
	cfg, err := r.Config()
	if err != nil {
		return err
	}
	cfg.Core.IsBare = false
	cfg.Core.Worktree = repo
	cfg.Raw.Section("gc").SetOption("auto", "0")
	if err := st.SetConfig(cfg); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	refs, err := Unbundle(st, bytes.NewReader(bundle))
	if err != nil {
		return err
	}
	for _, ref := range refs {
		if ref.Name == head {
			return st.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, plumbing.ReferenceName(head)))
		}
	}
	return nil
}
