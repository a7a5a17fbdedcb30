package share

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/replaytool/replay/internal/errkind"
	"github.com/replaytool/replay/internal/paths"
	"github.com/replaytool/replay/internal/platform"
	"github.com/replaytool/replay/internal/safewrite"
	"github.com/replaytool/replay/store"
)

// stagePrefix names the temp directories of pulls, beside the destination.
const stagePrefix = ".replay-pull-"

// pullWorkers bounds the files fetched at once (each holds one chunk).
const pullWorkers = 4

// stage writes the run into a locked temp dir beside opts.Into and renames it
// into place with mode.
func stage(ctx context.Context, b store.Backend, ix *Index, opts PullOptions, mode fs.FileMode) (res *PullResult, err error) {
	parent := filepath.Dir(opts.Into)
	if err := safewrite.MkdirAll(parent); err != nil {
		return nil, errkind.Errorf(ErrDestination, "pull destination %s: %v", opts.Into, err)
	}
	sweepStages(parent)
	tmp, err := os.MkdirTemp(parent, stagePrefix)
	if err != nil {
		return nil, errkind.Errorf(ErrDestination, "pull destination %s: %v", opts.Into, err)
	}
	lock, err := platform.OpenDirNoFollow(tmp)
	if err == nil {
		err = platform.TryLock(lock)
	}
	if lock != nil {
		defer lock.Close()
	}
	defer func() {
		if err != nil {
			safewrite.RemoveAllIn(parent, filepath.Base(tmp))
		}
	}()
	if err != nil {
		return nil, errkind.Errorf(ErrDestination, "pull destination %s: %v", opts.Into, err)
	}
	h := ix.Project
	if opts.Repo != "" {
		h = paths.ProjectHash(opts.Repo)
	}
	res = &PullResult{Run: ix.Run, Files: len(ix.Files), Project: h}
	if h != ix.Project {
		res.Rehomed = ix.Project
	}
	if err := fetchFiles(ctx, b, ix, tmp, h); err != nil {
		return nil, err
	}
	for _, f := range ix.Files {
		res.Bytes += f.Size
	}
	shadowRel := filepath.Join(h, "checkpoints", h)
	if ix.Checkpoints != nil {
		if err := unbundleShadow(ctx, b, ix, tmp, shadowRel, opts.Repo); err != nil {
			return nil, err
		}
		res.Shadow = filepath.Join(opts.Into, shadowRel)
	}
	if err := os.Chmod(tmp, mode); err != nil {
		return nil, errkind.Errorf(ErrDestination, "pull destination %s: %v", opts.Into, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := placeStaged(tmp, opts.Into); err != nil {
		return nil, err
	}
	res.Scratch = filepath.Join(opts.Into, h, "memory")
	return res, nil
}

// fetchFiles streams the run's files into tmp, a few at a time.
func fetchFiles(ctx context.Context, b store.Backend, ix *Index, tmp, h string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	work := make(chan File)
	for range pullWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for f := range work {
				if err := fetchFile(ctx, b, ix, tmp, h, f); err != nil {
					mu.Lock()
					if first == nil {
						first = err
						cancel()
					}
					mu.Unlock()
				}
			}
		}()
	}
	for _, f := range ix.Files {
		select {
		case work <- f:
		case <-ctx.Done():
		}
	}
	close(work)
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return first
}

func fetchFile(ctx context.Context, b store.Backend, ix *Index, tmp, h string, f File) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	perm := os.FileMode(0o644)
	if f.Mode == "0755" {
		perm = 0o755
	}
	fh, err := safewrite.OpenInRoot(tmp, localPath(h, f.Path), os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return errkind.Errorf(ErrDestination, "pull: writing %q: %v", f.Path, err)
	}
	defer fh.Close()
	if err := getBlob(ctx, b, f.Blob, fh, ix.Run); err != nil {
		return err
	}
	if err := fh.Sync(); err != nil {
		return errkind.Errorf(ErrDestination, "pull: writing %q: %v", f.Path, err)
	}
	return nil
}

// localPath maps an index path to its place under the destination, in the
// project folder h.
func localPath(h, p string) string {
	if p == "checkpoints/"+shadowManifest {
		return filepath.Join(h, "checkpoints", h, shadowManifest)
	}
	return filepath.Join(h, filepath.FromSlash(p))
}

// sweepStages removes the temp dirs of pulls that died (a kill -9): their
// lock is free. A live pull holds its lock, and is left alone.
func sweepStages(parent string) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), stagePrefix) {
			continue
		}
		p := filepath.Join(parent, e.Name())
		d, err := platform.OpenDirNoFollow(p)
		if err != nil {
			continue
		}
		if platform.TryLock(d) == nil {
			safewrite.RemoveAllIn(parent, e.Name())
		}
		d.Close()
	}
}

// placeStaged renames the staged run to into (an empty directory there is replaced).
func placeStaged(tmp, into string) error {
	parent := filepath.Dir(into)
	if err := safewrite.RemoveIn(parent, filepath.Base(into)); err != nil {
		return errkind.Errorf(ErrDestination, "pull destination %s is not empty: choose a new or empty directory", into)
	}
	if err := safewrite.RenameIn(parent, filepath.Base(tmp), filepath.Base(into)); err != nil {
		return errkind.Errorf(ErrDestination, "pull destination %s: %v", into, err)
	}
	return nil
}

// Summary is the line a pull prints.
func (r *PullResult) Summary() string {
	s := fmt.Sprintf("pulled run %s: %d files (%d bytes) into %s", r.Run, r.Files, r.Bytes, filepath.Dir(r.Scratch))
	return s
}
