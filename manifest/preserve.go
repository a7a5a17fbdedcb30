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

	"golang.org/x/sys/unix"
)

// PreserveResult says what Preserve did.
type PreserveResult struct {
	// Dest is the durable copy <scratch>/crucible-dispatch-<sid>.
	Dest string
	// Copied lists the copied files, relative to the dispatch dir.
	Copied []string
	// Skipped lists what was not copied (symlinks, special files), with the reason.
	Skipped []string
	// Removed is the live dispatch dir that was removed after the verified copy.
	Removed string
}

// Preserve copies a live dispatch dir's manifest and receipt ledger (with all, every
// regular file) into <scratch>/crucible-dispatch-<sid>/, verifies each copy by
// sha256, and only then removes the live dir. The manifest is copied under a shared
// lock so a concurrent appender cannot tear it.
func Preserve(dispatchDir, scratch string, all bool) (*PreserveResult, error) {
	dispatchDir, scratch = filepath.Clean(dispatchDir), filepath.Clean(scratch)
	sid, ok := SessionOfDir(dispatchDir)
	if !ok {
		return nil, fmt.Errorf("%s: not a crucible-dispatch-<sid> or dispatch-<sid> directory; refusing to move or remove it", dispatchDir)
	}
	if st, err := os.Stat(dispatchDir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("%s: no such dispatch directory", dispatchDir)
	}
	dest := filepath.Join(scratch, "crucible-dispatch-"+sid)
	realSrc, realDest := resolveExisting(dispatchDir), resolveExisting(dest)
	if realSrc == realDest {
		return nil, fmt.Errorf("%s is already the durable copy in %s; nothing to do", dispatchDir, scratch)
	}
	if within(resolveExisting(scratch), realSrc) {
		return nil, fmt.Errorf("the scratch directory %s lies inside %s; refusing to remove it", scratch, dispatchDir)
	}
	files, skipped, err := filesToPreserve(dispatchDir, all)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return nil, fmt.Errorf("%s: cannot create the durable copy: %w", dest, err)
	}
	res := &PreserveResult{Dest: dest, Skipped: skipped}
	for _, rel := range files {
		src, dst := filepath.Join(dispatchDir, rel), filepath.Join(dest, rel)
		if err := copyVerified(src, dst); err != nil {
			return res, fmt.Errorf("%w; the live directory %s was kept", err, dispatchDir)
		}
		res.Copied = append(res.Copied, rel)
	}
	if err := os.RemoveAll(dispatchDir); err != nil {
		return res, fmt.Errorf("%s: copied to %s, but cannot remove the live directory: %w", dispatchDir, dest, err)
	}
	res.Removed = dispatchDir
	return res, nil
}

// filesToPreserve lists the files to copy, relative to dir.
func filesToPreserve(dir string, all bool) (files, skipped []string, err error) {
	if !all {
		if !isFile(filepath.Join(dir, ManifestFile)) {
			return nil, nil, fmt.Errorf("%s: no manifest.jsonl to preserve; nothing was copied or removed (use --failed to keep the whole directory)", dir)
		}
		files = []string{ManifestFile}
		if isFile(filepath.Join(dir, ReceiptLedgerFile)) {
			files = append(files, ReceiptLedgerFile)
		}
		return files, nil, nil
	}
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		switch {
		case d.IsDir():
			return nil
		case d.Type().IsRegular():
			files = append(files, rel)
		default:
			skipped = append(skipped, rel+" (not a regular file)")
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("%s: cannot list the dispatch directory: %w", dir, err)
	}
	return files, skipped, nil
}

// copyVerified copies src to dst through a temp file and rename, fsync'd, then
// checks both hashes agree. The manifest is read under a shared flock.
func copyVerified(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("%s: cannot read: %w", src, err)
	}
	defer in.Close()
	if filepath.Base(src) == ManifestFile {
		if err := unix.Flock(int(in.Fd()), unix.LOCK_SH); err == nil {
			defer func() { _ = unix.Flock(int(in.Fd()), unix.LOCK_UN) }()
		}
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("%s: %w", filepath.Dir(dst), err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".tmp-*")
	if err != nil {
		return fmt.Errorf("%s: cannot create the copy: %w", dst, err)
	}
	defer os.Remove(tmp.Name())
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(tmp, h), in); err != nil {
		tmp.Close()
		return fmt.Errorf("copying %s to %s: %w", src, dst, err)
	}
	if err := errors.Join(tmp.Sync(), tmp.Close()); err != nil {
		return fmt.Errorf("%s: %w", dst, err)
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return fmt.Errorf("%s: %w", dst, err)
	}
	got, err := fileSHA256(dst)
	if err != nil {
		return err
	}
	if !bytes.Equal(got, h.Sum(nil)) {
		return fmt.Errorf("%s: the copy of %s does not match it", dst, src)
	}
	return nil
}

func fileSHA256(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot verify: %w", path, err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, fmt.Errorf("%s: cannot verify: %w", path, err)
	}
	return h.Sum(nil), nil
}
