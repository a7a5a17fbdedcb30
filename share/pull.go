package share

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/replaytool/replay/internal/errkind"
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
	// Project is the <H> the run is laid out under: that of --repo.
	Project string `json:"project"`
	// Rehomed is the <H> the run was pushed from, when it differs from Project.
	Rehomed string `json:"rehomed_from,omitempty"`
}

// Pull fetches a run from b into opts.Into. Every object is streamed in
// chunks, each checked against its sha256 before it is written, into a temp
// directory beside Into (locked while the pull runs, swept by a later pull
// when its puller died), then renamed into place, so a failure or an
// interrupt leaves nothing behind. The run is laid out under the <H> of
// opts.Repo (re-homed when it was pushed from another path; Rehomed says so).
func Pull(ctx context.Context, b store.Backend, opts PullOptions) (*PullResult, error) {
	run, err := pickRun(ctx, b, opts.Run)
	if err != nil {
		return nil, err
	}
	key := IndexKey(run)
	data, _, err := b.Get(ctx, key, maxIndex)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errkind.Errorf(ErrNoRun, "store %s: no run %s (replay pull %s --list shows the runs)", b, run, ShellQuote(b.String()))
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
	mode, err := checkDestination(opts.Into)
	if err != nil {
		return nil, err
	}
	return stage(ctx, b, ix, opts, mode)
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
		return "", errkind.Errorf(ErrNoRun, "store %s holds no run: push one with replay push PATH --to %s", b, ShellQuote(b.String()))
	case 1:
		return ids[0], nil
	}
	shown := ids
	if len(shown) > 10 {
		shown = append(shown[:10:10], "...")
	}
	return "", errkind.Errorf(ErrNoRun, "store %s holds %d runs (%s): name one: replay pull %s RUN --into DIR", b, len(ids), strings.Join(shown, ", "), ShellQuote(b.String()))
}

// checkDestination refuses a destination that exists and is not an empty
// directory, and returns the mode the pulled directory gets: the existing
// directory's, else 0755.
func checkDestination(into string) (fs.FileMode, error) {
	if !filepath.IsAbs(into) {
		return 0, errkind.Errorf(ErrDestination, "pull destination %q is not absolute", into)
	}
	st, err := os.Lstat(into)
	if errors.Is(err, fs.ErrNotExist) {
		return 0o755, nil
	}
	if err != nil {
		return 0, errkind.Errorf(ErrDestination, "pull destination %s: %v", into, err)
	}
	if !st.IsDir() {
		return 0, errkind.Errorf(ErrDestination, "pull destination %s exists and is not a directory: choose a new directory", into)
	}
	entries, err := os.ReadDir(into)
	if err != nil || len(entries) > 0 {
		return 0, errkind.Errorf(ErrDestination, "pull destination %s is not empty: choose a new or empty directory (nothing is overwritten)", into)
	}
	return st.Mode().Perm(), nil
}
