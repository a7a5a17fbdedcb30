package share

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/replaytool/replay/internal/errkind"
	"github.com/replaytool/replay/internal/safewrite"
	"github.com/replaytool/replay/store"
)

// unbundleShadow makes dir a shadow checkpoint repository from the run's
// bundles: bare storage (nothing is written into the project), core.worktree
// = repo, gc.auto = 0, replay.project = the project's identity, each bundle
// streamed to a temp file, checked and unpacked in order, then the index's
// refs and HEAD.
func unbundleShadow(ctx context.Context, b store.Backend, ix *Index, root, rel, repo string) error {
	dir := filepath.Join(root, rel)
	if err := safewrite.MkdirIn(root, rel); err != nil {
		return errkind.Errorf(ErrDestination, "pull: %v", err)
	}
	st := openShadowStorage(dir)
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
	cfg.Raw.Section("replay").SetOption("project", ix.ProjectID)
	if err := st.SetConfig(cfg); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	c := ix.Checkpoints
	for i, bl := range c.Bundles {
		if err := fetchBundle(ctx, b, ix, st, bl, dir, fmt.Sprintf("incoming-%d.bundle", i)); err != nil {
			return err
		}
	}
	for _, ref := range c.Refs {
		if _, err := st.EncodedObject(plumbing.CommitObject, ref.Hash); err != nil {
			return errkind.Errorf(store.ErrCorrupt, "run %s: checkpoint ref %s names commit %s, which no bundle holds: push the run again", ix.Run, ref.Name, ref.Hash)
		}
		if err := st.SetReference(plumbing.NewHashReference(plumbing.ReferenceName(ref.Name), ref.Hash)); err != nil {
			return fmt.Errorf("setting %s: %w", ref.Name, err)
		}
		if ref.Name == c.Head {
			if err := st.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, plumbing.ReferenceName(c.Head))); err != nil {
				return err
			}
		}
	}
	return nil
}

// fetchBundle streams one bundle of the chain to the new file dir/name and
// unpacks it into st.
func fetchBundle(ctx context.Context, b store.Backend, ix *Index, st *filesystem.Storage, bl Blob, dir, name string) error {
	f, err := safewrite.OpenInRoot(dir, name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return errkind.Errorf(ErrDestination, "pull: %v", err)
	}
	defer safewrite.RemoveIn(dir, name)
	defer f.Close()
	if err := getBlob(ctx, b, bl, f, ix.Run); err != nil {
		return err
	}
	if _, err := f.Seek(0, 0); err != nil {
		return err
	}
	if _, err := Unbundle(st, ctxReadSeeker{ctx, f}, bl.Size); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return errkind.Errorf(store.ErrCorrupt, "run %s: the checkpoints' bundle %s: %v; push the run again", ix.Run, bl.SHA256, err)
	}
	return nil
}
