package manifest

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/replaytool/replay/internal/platform"
)

// ErrNoDispatchDir is returned by Preserve when the dispatch directory does not
// exist (a second cleanup after a successful one).
var ErrNoDispatchDir = errors.New("dispatch dir missing")

// ErrNoLedger is returned by Preserve, in success mode, when manifest.jsonl or
// receipt-ledger.jsonl is missing: the directory is not deleted without both.
var ErrNoLedger = errors.New("manifest.jsonl or receipt-ledger.jsonl missing")

// PreserveResult says what Preserve did.
type PreserveResult struct {
	// Dest is the durable copy: the scratch dir joined with the dispatch dir's own
	// name, written as Crucible's script writes it (no cleaning of the scratch path).
	Dest string
	// Copied lists the copied files, relative to the dispatch dir.
	Copied []string
	// Skipped lists what was not copied (symlinks, special files), with the reason.
	Skipped []string
	// Removed is true when the live dispatch dir was removed after the verified copy.
	Removed bool
}

// Preserve does the cleanup of a dispatch directory: it copies the whole directory
// to <scratch>/<its name>/, each file verified, keeping modes and modification times.
// With failed, the live directory is kept. Without, it needs both manifest.jsonl and
// receipt-ledger.jsonl (else ErrNoLedger, nothing done), as Crucible's script does,
// and removes the live directory once every copy is verified; unlike the script,
// which keeps only those two files, the dispatch files are kept too, so that nothing
// a replay needs is lost. A missing directory is ErrNoDispatchDir. Nothing in the
// scratch dir is written through a symlink: a symlink where the copy or one of its
// files would go is refused before anything is written; symlinks inside the
// dispatch dir are skipped, not followed.
func Preserve(dispatchDir, scratch string, failed bool) (*PreserveResult, error) {
	if st, err := os.Stat(dispatchDir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("%s: %w", dispatchDir, ErrNoDispatchDir)
	}
	name := filepath.Base(filepath.Clean(dispatchDir))
	if name == "." || name == ".." || name == string(filepath.Separator) {
		return nil, fmt.Errorf("%s: the dispatch directory has no name of its own to copy it under; pass its path", dispatchDir)
	}
	res := &PreserveResult{Dest: joinLikeScript(scratch, name)}
	if err := preserveGuards(dispatchDir, res.Dest, scratch, failed); err != nil {
		return nil, err
	}
	if !failed {
		if err := requireLedger(dispatchDir); err != nil {
			return nil, err
		}
	}
	src, err := filepath.EvalSymlinks(dispatchDir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dispatchDir, err)
	}
	plan, skipped, err := walkDispatchDir(src)
	if err != nil {
		return nil, err
	}
	res.Skipped = skipped
	//replay:door the scratch directory under HOME the locator derived, not a run-chosen path; its content is written through os.Root below
	if err := os.MkdirAll(scratch, 0o755); err != nil {
		return nil, fmt.Errorf("%s: cannot create the scratch directory: %w", scratch, err)
	}
	root, err := os.OpenRoot(scratch)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot open the scratch directory: %w", scratch, err)
	}
	defer root.Close()
	if err := checkDest(root, name, plan); err != nil {
		return nil, err
	}
	if err := copyPlan(root, name, src, plan); err != nil {
		return res, fmt.Errorf("%w; the live directory %s was kept", err, dispatchDir)
	}
	for _, it := range plan {
		if !it.dir {
			res.Copied = append(res.Copied, it.rel)
		}
	}
	if failed {
		return res, nil
	}
	//replay:door removes the live dispatch directory only after its files were copied and verified; the path is the run the user named
	if err := os.RemoveAll(dispatchDir); err != nil {
		return res, fmt.Errorf("%s: copied to %s, but cannot remove the live directory: %w", dispatchDir, res.Dest, err)
	}
	res.Removed = true
	return res, nil
}

// joinLikeScript joins as Python's os.path.join does: one slash between, none added
// when dir already ends in one, dir not cleaned (the path is printed as given).
func joinLikeScript(dir, name string) string {
	if dir == "" || strings.HasSuffix(dir, "/") {
		return dir + name
	}
	return dir + "/" + name
}

// preserveGuards refuses a copy onto itself, into itself, or a removal that would
// take the copy along.
func preserveGuards(dispatchDir, dest, scratch string, failed bool) error {
	realSrc, realDest := resolveExisting(dispatchDir), resolveExisting(dest)
	if realSrc == realDest {
		return fmt.Errorf("%s is already the durable copy in %s; nothing to do", dispatchDir, scratch)
	}
	if within(realDest, realSrc) || within(resolveExisting(scratch), realSrc) {
		return fmt.Errorf("the scratch directory %s lies inside %s; refusing to copy the directory into itself", scratch, dispatchDir)
	}
	if failed {
		return nil
	}
	if st, err := os.Lstat(filepath.Clean(dispatchDir)); err == nil && st.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s is a symlink; refusing to remove what it points to (pass the real directory)", dispatchDir)
	}
	return nil
}

// copyItem is one directory or regular file of the copy, relative to the dispatch dir.
type copyItem struct {
	rel  string
	dir  bool
	info fs.FileInfo
}

// requireLedger refuses when manifest.jsonl or receipt-ledger.jsonl is missing, or
// is not a regular file.
func requireLedger(dir string) error {
	for _, name := range []string{ManifestFile, ReceiptLedgerFile} {
		st, err := os.Lstat(filepath.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s: %w", dir, ErrNoLedger)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(dir, name), err)
		}
		if !st.Mode().IsRegular() {
			return fmt.Errorf("%s is not a regular file (a symlink?); refusing to copy it or remove the directory", filepath.Join(dir, name))
		}
	}
	return nil
}

// walkDispatchDir lists the directories and regular files under dir (parents first)
// and what it skips.
func walkDispatchDir(dir string) (plan []copyItem, skipped []string, err error) {
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			plan = append(plan, copyItem{rel: rel, dir: true, info: info})
		case d.Type().IsRegular():
			plan = append(plan, copyItem{rel: rel, info: info})
		default:
			skipped = append(skipped, rel+" (not a regular file)")
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("%s: cannot list the dispatch directory: %w", dir, err)
	}
	return plan, skipped, nil
}

// checkDest refuses, before anything is written, a destination directory or file
// that exists as a symlink or as the wrong kind of thing.
func checkDest(root *os.Root, name string, plan []copyItem) error {
	check := func(rel string, wantDir bool) error {
		p := filepath.Join(name, rel)
		st, err := root.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		shown := filepath.Join(root.Name(), p)
		switch {
		case err != nil:
			return fmt.Errorf("%s: %w", shown, err)
		case st.Mode()&fs.ModeSymlink != 0:
			return fmt.Errorf("%s is a symlink; refusing to write the durable copy through it (remove it and run cleanup again)", shown)
		case wantDir && !st.IsDir():
			return fmt.Errorf("%s exists and is not a directory; refusing to write the durable copy there", shown)
		case !wantDir && !st.Mode().IsRegular():
			return fmt.Errorf("%s exists and is not a regular file; refusing to overwrite it", shown)
		}
		return nil
	}
	if err := check(".", true); err != nil {
		return err
	}
	for _, it := range plan {
		if err := check(it.rel, it.dir); err != nil {
			return err
		}
	}
	return nil
}

// copyPlan makes the copy under root/name. Directories get their modes and times
// at the end, deepest first, as a recursive copy does.
func copyPlan(root *os.Root, name, src string, plan []copyItem) error {
	if err := mkdirNoFollow(root, name); err != nil {
		return err
	}
	dest, err := root.OpenRoot(name)
	if err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(root.Name(), name), err)
	}
	defer dest.Close()
	for _, it := range plan {
		if it.dir {
			if it.rel != "." {
				if err := mkdirNoFollow(dest, it.rel); err != nil {
					return err
				}
			}
			continue
		}
		if err := copyFileInto(dest, filepath.Join(src, it.rel), it.rel, it.info); err != nil {
			return err
		}
	}
	for i := len(plan) - 1; i >= 0; i-- {
		it := plan[i]
		if !it.dir {
			continue
		}
		if err := dest.Chmod(it.rel, it.info.Mode().Perm()); err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(dest.Name(), it.rel), err)
		}
		if err := dest.Chtimes(it.rel, atimeOf(it.info), it.info.ModTime()); err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(dest.Name(), it.rel), err)
		}
	}
	return nil
}

// mkdirNoFollow makes directory rel in root, accepting one that exists as a real
// directory and refusing anything else (a symlink planted since the check).
func mkdirNoFollow(root *os.Root, rel string) error {
	err := root.Mkdir(rel, 0o755)
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s: cannot create: %w", filepath.Join(root.Name(), rel), err)
	}
	st, err := root.Lstat(rel)
	if err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(root.Name(), rel), err)
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a directory (a symlink?); refusing to write through it", filepath.Join(root.Name(), rel))
	}
	return nil
}

// copyFileInto copies the regular file srcPath to rel inside dest through a new temp
// file (created exclusively, so never through a symlink) and a rename, with the
// source's mode and times, fsync'd, then verifies the copy by sha256. The manifest is
// read under a shared lock so a concurrent appender cannot tear it.
func copyFileInto(dest *os.Root, srcPath, rel string, info fs.FileInfo) error {
	in, err := platform.OpenNoFollow(srcPath, os.O_RDONLY, 0)
	if err != nil {
		return fmt.Errorf("%s: cannot read: %w", srcPath, err)
	}
	defer in.Close()
	if filepath.Base(srcPath) == ManifestFile {
		if err := platform.LockShared(in); err == nil {
			defer func() { _ = platform.Unlock(in) }()
		}
	}
	shown := filepath.Join(dest.Name(), rel)
	// A name no one else uses: a leftover of a crashed run never blocks this one.
	tmpRel := filepath.Join(filepath.Dir(rel), fmt.Sprintf(".%s.tmp-%d-%d", filepath.Base(rel), os.Getpid(), time.Now().UnixNano()))
	tmp, err := dest.OpenFile(tmpRel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("%s: cannot create the copy: %w", shown, err)
	}
	defer func() { _ = dest.Remove(tmpRel) }() // a no-op after the rename
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(tmp, h), in); err != nil {
		tmp.Close()
		return fmt.Errorf("copying %s to %s: %w", srcPath, shown, err)
	}
	if err := errors.Join(tmp.Sync(), tmp.Close()); err != nil {
		return fmt.Errorf("%s: %w", shown, err)
	}
	if err := errors.Join(dest.Chmod(tmpRel, info.Mode().Perm()), dest.Chtimes(tmpRel, atimeOf(info), info.ModTime())); err != nil {
		return fmt.Errorf("%s: cannot keep mode and times: %w", shown, err)
	}
	if st, err := dest.Lstat(rel); err == nil && !st.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file (a symlink?); refusing to replace it", shown)
	}
	if err := dest.Rename(tmpRel, rel); err != nil {
		return fmt.Errorf("%s: %w", shown, err)
	}
	got, err := dest.ReadFile(rel)
	if err != nil {
		return fmt.Errorf("%s: cannot verify: %w", shown, err)
	}
	if sum := sha256.Sum256(got); !bytes.Equal(sum[:], h.Sum(nil)) {
		return fmt.Errorf("%s: the copy of %s does not match it", shown, srcPath)
	}
	return nil
}
