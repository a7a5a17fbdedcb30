package mutate

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/replaytool/replay/internal/gitrepo"
	"github.com/replaytool/replay/internal/safewrite"
)

// ExtractRef writes the templates directory as it was at git ref into dest: it opens
// the repository containing templatesDir (looking upwards for .git), resolves ref (a
// branch, tag, full or abbreviated commit hash, or any revision go-git understands),
// and writes every regular file of templatesDir's subtree at that commit below dest,
// with the commit's committer time as modification time (so Stale compares the
// pinned templates by when they were committed). Symlinks and submodules are skipped;
// names that would leave dest are refused. dest should be a new, empty directory
// (e.g. from os.MkdirTemp); an existing non-regular file in the way is an error.
func ExtractRef(templatesDir, ref, dest string) error {
	tree, commit, err := refTree(templatesDir, ref)
	if err != nil {
		return err
	}
	if err := safewrite.MkdirAll(dest); err != nil {
		return fmt.Errorf("--template-ref %s: %w", ref, err)
	}
	when := commit.Committer.When
	return tree.Files().ForEach(func(f *object.File) error {
		if f.Mode != filemode.Regular && f.Mode != filemode.Executable && f.Mode != filemode.Deprecated {
			return nil
		}
		path, err := destPath(dest, f.Name)
		if err != nil {
			return fmt.Errorf("--template-ref %s: %w", ref, err)
		}
		if err := writeBlob(dest, path, f); err != nil {
			return fmt.Errorf("--template-ref %s: %s: %w", ref, f.Name, err)
		}
		if err := os.Chtimes(path, when, when); err != nil {
			return fmt.Errorf("--template-ref %s: %w", ref, err)
		}
		return nil
	})
}

// CheckRef verifies, read-only, that ref resolves to a commit of the repository
// containing templatesDir that has templatesDir's folder, and returns that commit.
// It is ExtractRef's check without writing anything.
func CheckRef(templatesDir, ref string) (plumbing.Hash, error) {
	_, commit, err := refTree(templatesDir, ref)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return commit.Hash, nil
}

// refTree returns the tree of templatesDir's folder at ref, and the commit.
func refTree(templatesDir, ref string) (*object.Tree, *object.Commit, error) {
	root, rel, repo, err := openContaining(templatesDir)
	if err != nil {
		return nil, nil, fmt.Errorf("--template-ref %s: %w", ref, err)
	}
	hash, err := repo.ResolveRevision(plumbing.Revision(ref))
	if err != nil {
		return nil, nil, fmt.Errorf("--template-ref %s: no such branch, tag or commit in %s", ref, root)
	}
	commit, err := repo.CommitObject(*hash)
	if err != nil {
		return nil, nil, fmt.Errorf("--template-ref %s: %s is not a commit in %s: %w", ref, hash, root, err)
	}
	tree, err := commit.Tree()
	if err != nil {
		return nil, nil, fmt.Errorf("--template-ref %s: cannot read the tree of %s: %w", ref, hash, err)
	}
	if rel != "." {
		if tree, err = tree.Tree(filepath.ToSlash(rel)); err != nil {
			return nil, nil, fmt.Errorf("--template-ref %s: %s does not exist at commit %s; pick a ref that has the templates", ref, rel, hash.String()[:12])
		}
	}
	return tree, commit, nil
}

// openContaining opens the git repository whose worktree contains dir and returns
// the worktree root and dir relative to it.
func openContaining(dir string) (root, rel string, repo *git.Repository, err error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", "", nil, err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	repo, err = gitrepo.Open(abs)
	if errors.Is(err, git.ErrRepositoryNotExists) {
		return "", "", nil, fmt.Errorf("%s is not inside a git repository; drop --template-ref or keep the templates under git", dir)
	}
	if err != nil {
		return "", "", nil, fmt.Errorf("cannot open the git repository of %s: %w", dir, err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		return "", "", nil, fmt.Errorf("the git repository of %s has no worktree: %w", dir, err)
	}
	root = wt.Filesystem.Root()
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	rel, err = filepath.Rel(root, abs)
	if err != nil || !filepath.IsLocal(rel) && rel != "." {
		return "", "", nil, fmt.Errorf("%s is outside the worktree %s", dir, root)
	}
	return root, rel, repo, nil
}

// destPath joins a tree path onto dest, refusing any component that is empty, ".",
// ".." or contains a NUL or backslash.
func destPath(dest, name string) (string, error) {
	for _, part := range strings.Split(name, "/") {
		if part == "" || part == "." || part == ".." || strings.ContainsAny(part, "\x00\\") {
			return "", fmt.Errorf("refusing tree entry %q: it would leave %s", name, dest)
		}
	}
	if !filepath.IsLocal(filepath.FromSlash(name)) {
		return "", fmt.Errorf("refusing tree entry %q: it would leave %s", name, dest)
	}
	return filepath.Join(dest, filepath.FromSlash(name)), nil
}

// writeBlob writes f's content to path, below dest, through safewrite: no
// directory on the way and nothing at path may be a link.
func writeBlob(dest, path string, f *object.File) error {
	if st, err := os.Lstat(path); err == nil && !st.Mode().IsRegular() {
		return fmt.Errorf("%s exists and is not a regular file; extract into an empty directory", path)
	}
	rel, err := filepath.Rel(dest, path)
	if err != nil {
		return err
	}
	r, err := f.Reader()
	if err != nil {
		return err
	}
	defer r.Close()
	out, err := safewrite.OpenInRoot(dest, rel, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, r); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
