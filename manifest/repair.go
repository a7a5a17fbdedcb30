package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/replaytool/replay/internal/runfile"
	"github.com/replaytool/replay/internal/safewrite"
)

// RepairResult says what Repair did.
type RepairResult struct {
	// Moved are the corrupt interior lines moved to CorruptSidecar.
	Moved []CorruptLine
	// TornBytes is the size of a torn last line moved to TornSidecar (0 if none).
	TornBytes int
	// Backup is the copy of the manifest as it was before the repair ("" when nothing
	// was changed).
	Backup string
	// Sidecar is the path of CorruptSidecar.
	Sidecar string
}

// Repair moves the corrupt interior lines of the manifest at path (lines that are
// not JSON objects, other than the last non-blank one) to CorruptSidecar beside it,
// and a torn last line to TornSidecar, so that seq recovery, Crucible's own included,
// works again. Every other line is kept byte for byte. Before anything changes, the
// whole manifest is copied to manifest.jsonl.bak-<unix time of now> beside it, and the
// moved lines are appended (fsync'd) to their sidecar; the manifest is then rewritten
// in place under its lock. A manifest with nothing to move is left alone.
func Repair(path string, now time.Time) (*RepairResult, error) {
	dir := filepath.Dir(path)
	res := &RepairResult{Sidecar: filepath.Join(dir, CorruptSidecar)}
	if _, err := os.Lstat(path); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	err := safewrite.WithLock(path, func(f *os.File) error {
		st, err := f.Stat()
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		// The manifest's limit before anything of its size is allocated (a 4 GiB
		// sparse file costs no disk and would cost 4 GiB of memory).
		if err := runfile.CheckSize(path, runfile.Manifest, st.Size()); err != nil {
			return fmt.Errorf("%w (nothing was written)", err)
		}
		// The append's rule for a torn last line, read from the end before the
		// whole is: a longer one is no crash's fragment.
		if _, _, err := tornTail(f); errors.Is(err, runfile.ErrTooLarge) {
			return tornTooLarge(path)
		}
		data := make([]byte, st.Size())
		if _, err := f.ReadAt(data, 0); err != nil {
			return fmt.Errorf("%s: cannot read: %w", path, err)
		}
		kept, moved, torn := partition(data)
		if len(moved) == 0 && torn == nil {
			return nil
		}
		if res.Backup, err = writeBackup(dir, data, now); err != nil {
			return err
		}
		var side []byte
		for _, c := range moved {
			side = append(append(side, c.Text...), '\n')
		}
		if len(side) > 0 {
			if err := safewrite.AppendLine(res.Sidecar, side); err != nil {
				return err
			}
		}
		if torn != nil {
			if err := safewrite.AppendLine(filepath.Join(dir, TornSidecar), append(torn, '\n')); err != nil {
				return err
			}
		}
		w, err := safewrite.OpenInRoot(dir, filepath.Base(path), os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		defer w.Close()
		if _, err := w.WriteAt(kept, 0); err != nil {
			return fmt.Errorf("%s: cannot rewrite (the whole manifest is in %s): %w", path, res.Backup, err)
		}
		if err := w.Truncate(int64(len(kept))); err != nil {
			return fmt.Errorf("%s: cannot rewrite (the whole manifest is in %s): %w", path, res.Backup, err)
		}
		res.Moved, res.TornBytes = moved, len(torn)
		return w.Sync()
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// partition splits a manifest's bytes into the lines kept (with their newlines, as
// they were), the corrupt interior lines and a torn last line (nil if none).
func partition(data []byte) (kept []byte, moved []CorruptLine, torn []byte) {
	lines := splitLines(data)
	last := lastNonBlank(lines)
	kept = make([]byte, 0, len(data))
	rest := data
	for i, l := range lines {
		raw := rest
		if j := bytes.IndexByte(rest, '\n'); j >= 0 {
			raw, rest = rest[:j+1], rest[j+1:]
		} else {
			rest = nil
		}
		blank := len(bytes.TrimFunc(l, pySpace)) == 0
		switch {
		case blank || pyJSONObject(l):
			kept = append(kept, raw...)
		case i == last:
			torn = tornLine(raw)
		default:
			c := CorruptLine{Line: i + 1, Text: l}
			c.Seq, c.HasSeq = wholeSeq(l)
			moved = append(moved, c)
		}
	}
	return kept, moved, torn
}

// writeBackup writes data to the first free manifest.jsonl.bak-<unix>[-N] in dir.
func writeBackup(dir string, data []byte, now time.Time) (string, error) {
	base := ManifestFile + ".bak-" + strconv.FormatInt(now.Unix(), 10)
	for n := 1; ; n++ {
		name := base
		if n > 1 {
			name = base + "-" + strconv.Itoa(n)
		}
		p := filepath.Join(dir, name)
		if _, err := os.Lstat(p); err == nil {
			continue
		}
		if err := safewrite.WriteAtomic(p, data); err != nil {
			return "", err
		}
		return p, nil
	}
}
