package share

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/replaytool/replay/internal/errkind"
	"github.com/replaytool/replay/internal/safewrite"
	"github.com/replaytool/replay/report"
	"github.com/replaytool/replay/store"
)

// PullOptions says which run to pull and where.
type PullOptions struct {
	// Run is the run's id; "" pulls the store's only run.
	Run string
	// Into is the destination directory (absolute), chosen by the user: it
	// must not exist or be empty. The run lands in Into/<H>/ laid out as
	// Crucible's ~/.claude/projects/<H>/: memory/ (the scratch dir) and
	// checkpoints/<H>/ (the shadow checkpoint repository).
	Into string
	// Repo is the project directory the pulled shadow repository restores
	// into (its core.worktree).
	Repo string
}

// PullResult is what a pull wrote.
type PullResult struct {
	Run   string `json:"run"`
	Files int    `json:"files"`
	Bytes int64  `json:"bytes"`
	// Scratch is the pulled scratch dir: the PATH to give status, plan,
	// verify and ab. Shadow is the pulled shadow repository ("" without checkpoints).
	Scratch string `json:"scratch_dir"`
	Shadow  string `json:"shadow_dir"`
}

// Pull fetches a run from b into opts.Into. Every object is read and checked
// against its sha256 before anything is written; the run is then written into
// a temp directory beside Into and renamed into place, so a failure leaves
// nothing behind.
func Pull(ctx context.Context, b store.Backend, opts PullOptions) (*PullResult, error) {
	run, err := pickRun(ctx, b, opts.Run)
	if err != nil {
		return nil, err
	}
	key := IndexKey(run)
	data, _, err := b.Get(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errkind.Errorf(ErrNoRun, "store %s: no run %s (replay pull %s --list shows the runs)", b, run, b)
	}
	if err != nil {
		return nil, err
	}
	ix, err := ParseIndex(data, fmt.Sprintf("store %s: %s", b, key))
	if err != nil {
		return nil, err
	}
	if ix.Run != run {
		return nil, errkind.Errorf(ErrBadIndex, "store %s: %s names run %q: push the run again", b, key, ix.Run)
	}
	if err := checkDestination(opts.Into); err != nil {
		return nil, err
	}
	objects, err := fetchObjects(ctx, b, ix)
	if err != nil {
		return nil, err
	}
	res, err := stage(ix, objects, opts)
	if err != nil {
		return nil, err
	}
	return res, nil
}

// Runs lists the run ids in b, sorted.
func Runs(ctx context.Context, b store.Backend) ([]string, error) {
	keys, err := b.List(ctx, "runs/")
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, k := range keys {
		id, ok := strings.CutSuffix(strings.TrimPrefix(k, "runs/"), "/index.json")
		if ok && CheckRunID(id) == nil {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids, nil
}

func pickRun(ctx context.Context, b store.Backend, run string) (string, error) {
	if run != "" {
		return run, CheckRunID(run)
	}
	ids, err := Runs(ctx, b)
	if err != nil {
		return "", err
	}
	switch len(ids) {
	case 0:
		return "", errkind.Errorf(ErrNoRun, "store %s holds no run: push one with replay push PATH --to %s", b, b)
	case 1:
		return ids[0], nil
	}
	shown := ids
	if len(shown) > 10 {
		shown = append(shown[:10:10], "...")
	}
	return "", errkind.Errorf(ErrNoRun, "store %s holds %d runs (%s): name one: replay pull URL RUN --into DIR", b, len(ids), strings.Join(shown, ", "))
}

func checkDestination(into string) error {
	if !filepath.IsAbs(into) {
		return errkind.Errorf(ErrDestination, "pull destination %q is not absolute", into)
	}
	st, err := os.Lstat(into)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return errkind.Errorf(ErrDestination, "pull destination %s: %v", into, err)
	}
	if !st.IsDir() {
		return errkind.Errorf(ErrDestination, "pull destination %s exists and is not a directory: choose a new directory", into)
	}
	entries, err := os.ReadDir(into)
	if err != nil || len(entries) > 0 {
		return errkind.Errorf(ErrDestination, "pull destination %s is not empty: choose a new or empty directory (nothing is overwritten)", into)
	}
	return nil
}

// fetchObjects reads every object the index names and checks its hash and size.
func fetchObjects(ctx context.Context, b store.Backend, ix *Index) (map[string][]byte, error) {
	want := map[string]int64{}
	for _, f := range ix.Files {
		want[f.SHA256] = f.Size
	}
	if ix.Checkpoints != nil {
		want[ix.Checkpoints.SHA256] = ix.Checkpoints.Size
	}
	hashes := make([]string, 0, len(want))
	for h := range want {
		hashes = append(hashes, h)
	}
	sort.Strings(hashes)
	out := make(map[string][]byte, len(want))
	for _, h := range hashes {
		key := BlobKey(h)
		data, _, err := b.Get(ctx, key)
		if errors.Is(err, store.ErrNotFound) {
			return nil, errkind.Errorf(store.ErrNotFound, "store %s: run %s: object %s is missing: push the run again from its machine", b, ix.Run, key)
		}
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(data)
		if hex.EncodeToString(sum[:]) != h || int64(len(data)) != want[h] {
			return nil, errkind.Errorf(store.ErrCorrupt, "store %s: run %s: object %s does not match its sha256 (corrupt): delete it and push the run again; nothing was written", b, ix.Run, key)
		}
		out[h] = data
	}
	return out, nil
}

// stage writes the run into a temp dir beside opts.Into and renames it into place.
func stage(ix *Index, objects map[string][]byte, opts PullOptions) (res *PullResult, err error) {
	parent := filepath.Dir(opts.Into)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, errkind.Errorf(ErrDestination, "pull destination %s: %v", opts.Into, err)
	}
	tmp, err := os.MkdirTemp(parent, ".replay-pull-")
	if err != nil {
		return nil, errkind.Errorf(ErrDestination, "pull destination %s: %v", opts.Into, err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	res = &PullResult{Run: ix.Run, Files: len(ix.Files)}
	for _, f := range ix.Files {
		if err := writeStaged(tmp, localPath(ix, f.Path), objects[f.SHA256], f.Mode); err != nil {
			return nil, errkind.Errorf(ErrDestination, "pull: writing %s: %v", f.Path, err)
		}
		res.Bytes += f.Size
	}
	shadowRel := filepath.Join(ix.Project, "checkpoints", ix.Project)
	if ix.Checkpoints != nil {
		if err := unbundleShadow(filepath.Join(tmp, shadowRel), objects[ix.Checkpoints.SHA256], ix.Checkpoints.Head, opts.Repo); err != nil {
			return nil, errkind.Errorf(store.ErrCorrupt, "run %s: the checkpoints' bundle: %v; push the run again", ix.Run, err)
		}
		res.Shadow = filepath.Join(opts.Into, shadowRel)
	}
	if err := placeStaged(tmp, opts.Into); err != nil {
		return nil, err
	}
	res.Scratch = filepath.Join(opts.Into, ix.Project, "memory")
	return res, nil
}

// localPath maps an index path to its place under the destination.
func localPath(ix *Index, p string) string {
	if p == "checkpoints/"+shadowManifest {
		return filepath.Join(ix.Project, "checkpoints", ix.Project, shadowManifest)
	}
	return filepath.Join(ix.Project, filepath.FromSlash(p))
}

// writeStaged creates root/rel (it must not exist) without following a link.
func writeStaged(root, rel string, data []byte, mode string) error {
	perm := os.FileMode(0o644)
	if mode == "0755" {
		perm = 0o755
	}
	f, err := safewrite.OpenInRoot(root, rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := bytes.NewReader(data).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// placeStaged renames the staged run to into (an empty directory there is replaced).
func placeStaged(tmp, into string) error {
	if err := os.Remove(into); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return errkind.Errorf(ErrDestination, "pull destination %s is not empty: choose a new or empty directory", into)
	}
	if err := os.Rename(tmp, into); err != nil {
		return errkind.Errorf(ErrDestination, "pull destination %s: %v", into, err)
	}
	return nil
}

// Summary is the line a pull prints, with the next command to run.
func (r *PullResult) Summary() string {
	return fmt.Sprintf("pulled run %s: %s (%s) into %s", r.Run, report.Count(r.Files, "file"), report.Count(int(r.Bytes), "byte"), filepath.Dir(r.Scratch))
}
