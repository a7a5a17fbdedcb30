package agent

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/replaytool/replay/internal/platform"
	"github.com/replaytool/replay/internal/runfile"
	"github.com/replaytool/replay/internal/safewrite"
)

// fastForward moves the worktree from the recorded HEAD before (its HEAD) to the
// recorded HEAD after: every path the commits touch must hold what HEAD before
// holds (in the worktree and the index); those paths are written and staged, and
// the branch HEAD names moves to the recorded commit. Other uncommitted or staged
// changes stay as they were.
func fastForward(repo *git.Repository, wt *git.Worktree, head *plumbing.Reference, chain []*object.Commit, changes []object.Changes) error {
	root := wt.Filesystem.Root()
	base, err := repo.CommitObject(head.Hash())
	if err != nil {
		return fmt.Errorf("HEAD %s: %w", head.Hash(), err)
	}
	baseTree, err := base.Tree()
	if err != nil {
		return fmt.Errorf("HEAD %s: %w", head.Hash(), err)
	}
	final, err := chain[len(chain)-1].Tree()
	if err != nil {
		return err
	}
	touched := map[string]bool{}
	for _, cs := range changes {
		for _, ch := range cs {
			for _, name := range []string{ch.From.Name, ch.To.Name} {
				if name != "" {
					touched[name] = true
				}
			}
		}
	}
	for name := range touched {
		if err := checkUnchanged(root, baseTree, name); err != nil {
			return err
		}
	}
	if err := stagePaths(repo, wt, root, final, touched); err != nil {
		return err
	}
	target := head.Name()
	if head.Name() == plumbing.HEAD {
		target = plumbing.HEAD
	} else if sym, err := repo.Storer.Reference(plumbing.HEAD); err == nil && sym.Type() == plumbing.SymbolicReference {
		target = sym.Target()
	}
	ref := plumbing.NewHashReference(target, chain[len(chain)-1].Hash)
	if err := repo.Storer.SetReference(ref); err != nil {
		return fmt.Errorf("%s: cannot move %s to %s: %w", root, target, ref.Hash(), err)
	}
	return nil
}

// checkUnchanged refuses a path whose worktree content differs from base's.
func checkUnchanged(root string, base *object.Tree, name string) error {
	h, err := worktreeBlobHash(root, name)
	f, ferr := base.File(name)
	switch {
	case errors.Is(err, os.ErrNotExist) && ferr != nil:
		return nil
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("%s: %w", name, err)
	case err == nil && ferr == nil && h == f.Hash:
		return nil
	}
	return fmt.Errorf("%s has uncommitted changes and a recorded commit changes it; commit or stash them, then replay again", name)
}

// worktreeBlobHash is the blob hash git gives the worktree's file name under
// root: a symbolic link's target text (never what it leads to), a regular
// file's content streamed through runfile (no link on the way followed, never
// blocking, in bounded memory whatever its size).
func worktreeBlobHash(root, name string) (plumbing.Hash, error) {
	rel := filepath.FromSlash(name)
	if st, err := os.Lstat(filepath.Join(root, rel)); err == nil && st.Mode()&fs.ModeSymlink != 0 {
		target, err := os.Readlink(filepath.Join(root, rel))
		if err != nil {
			return plumbing.ZeroHash, err
		}
		return plumbing.ComputeHash(plumbing.BlobObject, []byte(target)), nil
	}
	r, err := runfile.OpenIn(root, rel, runfile.WorktreeFile)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	defer r.Close()
	h := plumbing.NewHasher(plumbing.BlobObject, r.Stat().Size())
	n, err := io.Copy(h, r)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if n != r.Stat().Size() {
		return plumbing.ZeroHash, fmt.Errorf("%s changed while it was read", filepath.Join(root, rel))
	}
	return h.Sum(), nil
}

// stagePaths writes every touched path as final holds it (removed when final has
// none) and stages them all with one index write; a symlink in the worktree is
// never written through.
func stagePaths(repo *git.Repository, wt *git.Worktree, root string, final *object.Tree, touched map[string]bool) error {
	names := make([]string, 0, len(touched))
	for name := range touched {
		names = append(names, name)
	}
	sort.Strings(names)
	var kept []*object.File
	for _, name := range names {
		f, err := final.File(name)
		if errors.Is(err, object.ErrFileNotFound) {
			if _, err := wt.Remove(name); err != nil {
				return fmt.Errorf("%s: removing %s: %w", root, name, err)
			}
			continue
		}
		if err != nil {
			return err
		}
		if err := writeRecordedFile(root, f); err != nil {
			return err
		}
		kept = append(kept, f)
	}
	if len(kept) == 0 {
		return nil
	}
	idx, err := repo.Storer.Index()
	if err != nil {
		return fmt.Errorf("%s: reading the index: %w", root, err)
	}
	for _, f := range kept {
		info, err := os.Lstat(filepath.Join(root, filepath.FromSlash(f.Name)))
		if err != nil {
			return fmt.Errorf("%s: %w", f.Name, err)
		}
		e, err := idx.Entry(f.Name)
		if err != nil {
			e = idx.Add(f.Name)
		}
		e.Hash, e.Mode, e.Size, e.ModifiedAt = f.Hash, f.Mode, uint32(info.Size()), info.ModTime()
		if st, ok := platform.FileStat(info); ok {
			e.CreatedAt = st.Ctime
			e.Dev, e.Inode, e.UID, e.GID = uint32(st.Dev), uint32(st.Ino), st.UID, st.GID
		}
	}
	if err := repo.Storer.SetIndex(idx); err != nil {
		return fmt.Errorf("%s: writing the index: %w", root, err)
	}
	return nil
}

// writeRecordedFile writes the regular or executable file f of a recorded tree in
// the worktree at root, crash-safe and never through a symlink.
func writeRecordedFile(root string, f *object.File) error {
	if f.Mode != filemode.Regular && f.Mode != filemode.Executable {
		return fmt.Errorf("%s: the recorded commit holds %s as mode %s; only regular files are re-applied", root, f.Name, f.Mode)
	}
	data, err := f.Contents()
	if err != nil {
		return err
	}
	if err := safewrite.WriteAtomicIn(root, filepath.FromSlash(f.Name), []byte(data)); err != nil {
		return err
	}
	if f.Mode == filemode.Executable {
		if err := os.Chmod(filepath.Join(root, filepath.FromSlash(f.Name)), 0o755); err != nil {
			return fmt.Errorf("%s: %w", f.Name, err)
		}
	}
	return nil
}

// putPath writes name as tree holds it (or removes it) and stages it.
func putPath(wt *git.Worktree, root string, tree *object.Tree, name string) error {
	f, err := tree.File(name)
	if errors.Is(err, object.ErrFileNotFound) {
		if _, err := wt.Remove(name); err != nil {
			return fmt.Errorf("%s: removing %s: %w", root, name, err)
		}
		return nil
	}
	if err != nil {
		return err
	}
	if f.Mode != filemode.Regular && f.Mode != filemode.Executable {
		return fmt.Errorf("%s: the recorded commit holds %s as mode %s; only regular files are re-applied", root, name, f.Mode)
	}
	data, err := f.Contents()
	if err != nil {
		return err
	}
	if err := safewrite.WriteAtomicIn(root, filepath.FromSlash(name), []byte(data)); err != nil {
		return err
	}
	if f.Mode == filemode.Executable {
		if err := os.Chmod(filepath.Join(root, filepath.FromSlash(name)), 0o755); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	if err := wt.AddWithOptions(&git.AddOptions{Path: name, SkipStatus: true}); err != nil {
		return fmt.Errorf("%s: staging %s: %w", root, name, err)
	}
	return nil
}
