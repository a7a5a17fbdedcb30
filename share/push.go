package share

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/replaytool/replay/internal/errkind"
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
	// Checkpoints is true when the shadow repository was bundled.
	Checkpoints bool `json:"checkpoints"`
	// IndexWritten is false when the store already held this exact index.
	IndexWritten bool `json:"index_written"`
	// Skipped are files left out: links and what is not a regular file.
	Skipped []string `json:"skipped"`
}

// pushWorkers bounds concurrent uploads.
const pushWorkers = 4

// maxIndexAttempts bounds the compare-and-swap loop on a run's index.
const maxIndexAttempts = 20

// Push uploads the run at src to b: the objects the store lacks, then the
// run's index, with a compare-and-swap. Replay is the pushing version, for the index.
func Push(ctx context.Context, b store.Backend, src Source, replay string) (*PushResult, error) {
	snap, err := read(src)
	if err != nil {
		return nil, err
	}
	snap.index.Replay = replay
	res := &PushResult{Run: snap.index.Run, Files: len(snap.index.Files), Objects: len(snap.objects),
		Checkpoints: snap.index.Checkpoints != nil, Skipped: snap.skipped}
	if err := uploadObjects(ctx, b, snap.objects, res); err != nil {
		return nil, err
	}
	written, err := putIndex(ctx, b, snap.index.Run, snap.index.Marshal())
	if err != nil {
		return nil, err
	}
	res.IndexWritten = written
	return res, nil
}

// uploadObjects puts every object the store does not have, a few at a time.
func uploadObjects(ctx context.Context, b store.Backend, objects map[string][]byte, res *PushResult) error {
	hashes := make([]string, 0, len(objects))
	for h := range objects {
		hashes = append(hashes, h)
	}
	sort.Strings(hashes)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	work := make(chan string)
	for range pushWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for h := range work {
				uploaded, err := uploadOne(ctx, b, h, objects[h])
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
					cancel()
				}
				if uploaded {
					res.New++
					res.NewBytes += int64(len(objects[h]))
				}
				mu.Unlock()
			}
		}()
	}
	for _, h := range hashes {
		select {
		case work <- h:
		case <-ctx.Done():
		}
	}
	close(work)
	wg.Wait()
	return firstErr
}

func uploadOne(ctx context.Context, b store.Backend, h string, data []byte) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	key := BlobKey(h)
	ok, err := b.Has(ctx, key)
	if err != nil || ok {
		return false, err
	}
	return true, b.Put(ctx, key, data)
}

// putIndex writes run's index last, as a compare-and-swap: created when
// absent, left alone when the store already holds these bytes, replaced when
// it holds an older index of the run. A lost race re-reads and tries again, so
// of two concurrent pushes each writes a whole index and neither a half one.
func putIndex(ctx context.Context, b store.Backend, run string, data []byte) (bool, error) {
	key := IndexKey(run)
	for range maxIndexAttempts {
		cur, ver, err := b.Get(ctx, key)
		switch {
		case errors.Is(err, store.ErrNotFound):
			ver = ""
		case err != nil:
			return false, err
		case bytes.Equal(cur, data):
			return false, nil
		}
		_, err = b.PutIf(ctx, key, data, ver)
		if err == nil {
			return true, nil
		}
		if !errors.Is(err, store.ErrConflict) {
			return false, err
		}
	}
	return false, errkind.Errorf(store.ErrConflict, "store %s: %s kept changing under %d attempts: other pushes of this run are running; retry", b, key, maxIndexAttempts)
}

// Summary is the one line a push prints.
func (r *PushResult) Summary(where string) string {
	s := fmt.Sprintf("pushed run %s to %s: %s, %s, %s (%s)", r.Run, where, report.Count(r.Files, "file"), report.Count(r.Objects, "object"), report.Count(r.New, "new object"), report.Count(int(r.NewBytes), "byte"))
	if !r.Checkpoints {
		s += ", no checkpoints"
	}
	return s
}
