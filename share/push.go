package share

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/replaytool/replay/internal/errkind"
	"github.com/replaytool/replay/internal/platform"
	"github.com/replaytool/replay/report"
	"github.com/replaytool/replay/store"
)

// PushResult is what a push did.
type PushResult struct {
	Run   string `json:"run"`
	Files int    `json:"files"`
	// Objects is the number of objects the run has; New of them were uploaded
	// (0 on a second push of an unchanged run), NewBytes their size.
	Objects  int   `json:"objects"`
	New      int   `json:"new_objects"`
	NewBytes int64 `json:"new_bytes"`
	// Checkpoints is true when the run has a shadow repository.
	Checkpoints bool `json:"checkpoints"`
	// IndexWritten is false when the store already held this exact index.
	IndexWritten bool `json:"index_written"`
	// Skipped are files left out: links and what is not a regular file.
	Skipped []string `json:"skipped"`
	// Lost is what --force dropped from the store's copy of the run.
	Lost []string `json:"lost,omitempty"`
}

// PushOptions are the choices of a push.
type PushOptions struct {
	// Replay is the pushing version, for the index.
	Replay string
	// Force replaces the store's copy of the run even when it holds what the
	// local copy lacks (manifest lines, files, checkpoints).
	Force bool
	// Tmp is where the checkpoints' bundle is written before it is uploaded
	// ("" for the system's temp dir).
	Tmp string
}

// maxIndexAttempts bounds the compare-and-swap loop on a run's index.
const maxIndexAttempts = 20

// Push uploads the run at src to b: the objects the store lacks, streamed in
// chunks, then the run's index with a compare-and-swap. The store's copy is
// replaced only when the local copy holds all of it (an older copy never
// replaces a newer one) unless opts.Force.
func Push(ctx context.Context, b store.Backend, src Source, opts PushOptions) (*PushResult, error) {
	for range maxIndexAttempts {
		res, err := pushOnce(ctx, b, src, opts)
		if !errors.Is(err, errRetry) {
			return res, err
		}
	}
	return nil, errkind.Errorf(store.ErrConflict, "store %s: the run's index kept changing under %d attempts: other pushes of this run are running; retry", b, maxIndexAttempts)
}

var errRetry = errors.New("the index changed: retry")

func pushOnce(ctx context.Context, b store.Backend, src Source, opts PushOptions) (*PushResult, error) {
	snap, err := read(src)
	if err != nil {
		return nil, err
	}
	ix := snap.index
	ix.Replay = opts.Replay
	key := IndexKey(ix.Run)
	prevData, ver, err := b.Get(ctx, key, maxIndex)
	var prev *Index
	switch {
	case errors.Is(err, store.ErrNotFound):
		ver = ""
	case err != nil:
		return nil, err
	default:
		if prev, err = ParseIndex(prevData, fmt.Sprintf("store %s: %s", b, key)); err != nil {
			prev = nil // unreadable (another format): replaced, as the compare-and-swap allows
		}
	}
	prevFiles := map[string]File{}
	var known map[string]bool
	if prev != nil {
		// The store's copy's objects are checked once, together: one missing
		// (removed by hand, a damaged store) is uploaded again.
		var hashes []string
		for _, f := range prev.Files {
			prevFiles[f.Path] = f
			hashes = append(hashes, blobObjects(f.Blob)...)
		}
		if prev.Checkpoints != nil {
			for _, bl := range prev.Checkpoints.Bundles {
				hashes = append(hashes, blobObjects(bl)...)
			}
		}
		if known, err = present(ctx, b, hashes); err != nil {
			return nil, err
		}
	}
	u := newUploader(ctx, b, known)
	files, err := uploadFiles(u, snap, prevFiles, known)
	if err != nil {
		u.close()
		return nil, err
	}
	ix.Files = files
	var lost []string
	if snap.shadow != "" {
		var prevC *Checkpoints
		if prev != nil {
			prevC = prev.Checkpoints
		}
		ix.Checkpoints, lost, err = pushCheckpoints(ctx, u, snap.shadow, opts.Tmp, prevC, opts.Force)
		if err != nil {
			u.close()
			return nil, err
		}
	} else if prev != nil && prev.Checkpoints != nil {
		lost = append(lost, fmt.Sprintf("%s of checkpoints", report.Count(len(prev.Checkpoints.Refs), "ref")))
	}
	if err := u.close(); err != nil {
		return nil, err
	}
	if prev != nil {
		more, err := lostFiles(ctx, b, prev, ix, snap)
		if err != nil {
			return nil, err
		}
		lost = append(more, lost...)
	}
	if len(lost) > 0 && !opts.Force {
		return nil, errkind.Errorf(ErrOlder, "store %s: its copy of run %s holds what this one lacks: %s; an older copy never replaces a newer one: pull the run (replay pull %s %s --into DIR) and push from there, or push with --force to replace it and lose that", b, ix.Run, strings.Join(lost, "; "), ShellQuote(store.URLOf(b)), ix.Run)
	}
	res := &PushResult{Run: ix.Run, Files: len(ix.Files), Checkpoints: ix.Checkpoints != nil, Skipped: snap.skipped,
		New: int(u.New.Load()), NewBytes: u.NewBytes.Load(), Objects: countObjects(ix)}
	if opts.Force {
		res.Lost = lost
	}
	data := ix.Marshal()
	if prev != nil && bytes.Equal(prevData, data) {
		return res, nil
	}
	if _, err := b.PutIf(ctx, key, data, ver); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return nil, errRetry
		}
		return nil, err
	}
	res.IndexWritten = true
	return res, nil
}

// uploadFiles streams every file to the store and returns the index's
// files. A file whose stat line matches the store's index of the run is
// taken from it unread.
func uploadFiles(u *uploader, snap *snapshot, prev map[string]File, known map[string]bool) ([]File, error) {
	out := make([]File, 0, len(snap.index.Files))
	for _, f := range snap.index.Files {
		lf := snap.local[f.Path]
		if p, ok := prev[f.Path]; ok && lf.stat != "" && p.Stat == lf.stat && p.Mode == f.Mode && allKnown(p.Blob, known) {
			out = append(out, p)
			continue
		}
		blob, err := putFile(u, lf)
		if err != nil {
			return nil, err
		}
		f.Blob, f.Stat = blob, lf.stat
		out = append(out, f)
	}
	return out, nil
}

func putFile(u *uploader, lf localFile) (Blob, error) {
	fh, err := platform.OpenNoFollow(lf.abs, os.O_RDONLY|platform.ONonBlock, 0)
	if err != nil {
		return Blob{}, err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return Blob{}, err
	}
	if !st.Mode().IsRegular() || st.Size() != lf.size {
		return Blob{}, fmt.Errorf("%s changed while it was pushed: push again when it is quiet", lf.abs)
	}
	return u.putBlob(fh, lf.size, lf.abs)
}

func allKnown(b Blob, known map[string]bool) bool {
	for _, h := range blobObjects(b) {
		if !known[h] {
			return false
		}
	}
	return true
}

// checkWorkers bounds the concurrent existence checks of present.
const checkWorkers = 16

// present returns which of hashes the store holds, asking a few at a time.
func present(ctx context.Context, b store.Backend, hashes []string) (map[string]bool, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu    sync.Mutex
		out   = map[string]bool{}
		first error
		wg    sync.WaitGroup
	)
	work := make(chan string)
	for range checkWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for h := range work {
				ok, err := b.Has(ctx, BlobKey(h))
				mu.Lock()
				if err != nil && first == nil {
					first = err
					cancel()
				}
				if ok {
					out[h] = true
				}
				mu.Unlock()
			}
		}()
	}
	seen := map[string]bool{}
	for _, h := range hashes {
		if seen[h] {
			continue
		}
		seen[h] = true
		select {
		case work <- h:
		case <-ctx.Done():
		}
	}
	close(work)
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return out, first
}

func countObjects(ix *Index) int {
	seen := map[string]bool{}
	for _, f := range ix.Files {
		for _, h := range blobObjects(f.Blob) {
			seen[h] = true
		}
	}
	if ix.Checkpoints != nil {
		for _, bl := range ix.Checkpoints.Bundles {
			for _, h := range blobObjects(bl) {
				seen[h] = true
			}
		}
	}
	return len(seen)
}

// lostFiles names what the store's index prev holds that ix lacks: manifest
// lines past (or differing from) the local manifest, and files.
func lostFiles(ctx context.Context, b store.Backend, prev, ix *Index, snap *snapshot) ([]string, error) {
	var lost []string
	cur := map[string]File{}
	for _, f := range ix.Files {
		cur[f.Path] = f
	}
	var pm File
	for _, f := range prev.Files {
		if f.Path == prev.Manifest {
			pm = f
		}
	}
	if lm, ok := cur[prev.Manifest]; ok && lm.SHA256 != pm.SHA256 {
		n, err := linesBeyond(ctx, b, prev, pm, snap.local[prev.Manifest].abs)
		if err != nil {
			return nil, err
		}
		if n > 0 {
			lost = append(lost, fmt.Sprintf("%s of %s", report.Count(n, "manifest line"), report.SafeText(prev.Manifest)))
		}
	}
	var gone []string
	for _, f := range prev.Files {
		if _, ok := cur[f.Path]; !ok {
			gone = append(gone, report.SafeText(f.Path))
		}
	}
	if len(gone) > 0 {
		shown := gone[:min(len(gone), 5)]
		more := ""
		if len(gone) > 5 {
			more = fmt.Sprintf(" and %d more", len(gone)-5)
		}
		lost = append(lost, fmt.Sprintf("%s (%s%s)", report.Count(len(gone), "file"), strings.Join(shown, ", "), more))
	}
	return lost, nil
}

// linesBeyond streams the store's manifest against the local one and counts
// the store's lines that are not a prefix of the local file: those a push
// would lose (0 when the local manifest extends the store's).
func linesBeyond(ctx context.Context, b store.Backend, prev *Index, pm File, local string) (int, error) {
	f, err := platform.OpenNoFollow(local, os.O_RDONLY|platform.ONonBlock, 0)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	c := &prefixCounter{local: f}
	if err := getBlob(ctx, b, pm.Blob, c, prev.Run); err != nil {
		return 0, err
	}
	return c.lost, nil
}

// prefixCounter compares what is written with local, counting the newlines
// written from the first line that differs on.
type prefixCounter struct {
	local    io.Reader
	diverged bool
	lost     int
	buf      []byte
}

func (c *prefixCounter) Write(p []byte) (int, error) {
	if !c.diverged {
		if cap(c.buf) < len(p) {
			c.buf = make([]byte, len(p))
		}
		n, _ := io.ReadFull(c.local, c.buf[:len(p)])
		i := 0
		for i < n && c.buf[i] == p[i] {
			i++
		}
		if i == len(p) {
			return len(p), nil
		}
		c.diverged = true
		// The line that differs counts from its start.
		c.lost += bytes.Count(p[i:], []byte("\n"))
		return len(p), nil
	}
	c.lost += bytes.Count(p, []byte("\n"))
	return len(p), nil
}

// Summary is the one line a push prints.
func (r *PushResult) Summary(where string) string {
	s := fmt.Sprintf("pushed run %s to %s: %s, %s, %s (%s)", r.Run, where, report.Count(r.Files, "file"), report.Count(r.Objects, "object"), report.Count(r.New, "new object"), report.Count(int(r.NewBytes), "byte"))
	if !r.Checkpoints {
		s += ", no checkpoints"
	}
	return s
}
