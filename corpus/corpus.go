package corpus

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/replaytool/replay/internal/errkind"
	"github.com/replaytool/replay/replicate"
)

// ErrBadOptions is the kind of the error for a corpus run asked for with
// arguments it cannot run with: no pipelines, no output directory.
var ErrBadOptions = errors.New("bad corpus options")

// ErrMismatch is the kind of the error for an output directory whose log was
// written by a corpus run with other arguments.
var ErrMismatch = errors.New("corpus log of other arguments")

// Request is a corpus run as the user asked for it.
type Request struct {
	// Args are the pipelines: directories, or glob patterns replay expands itself;
	// relative ones are taken from Cwd.
	Args []string
	Cwd  string
	// Out is the directory of the corpus log and result files.
	Out string
	// Settings are what every pipeline is replayed with; they key the log.
	Settings Settings
	// Run replays one pipeline (an expanded, absolute directory) and returns its
	// result and the markdown report it wrote ("" when none).
	Run func(ctx context.Context, dir string) (*replicate.Result, string, error)
	// Fatal reports whether an error of Run stops the whole corpus (a usage error
	// every pipeline would repeat, an interrupt) instead of becoming the row.
	Fatal func(error) bool
	Now   time.Time
	Ctx   context.Context
	// Info receives progress lines; nil is silent.
	Info func(string)
	// More, when above 0, extends the corpus experiment the log in Out holds by
	// More replicas per arm in every pipeline (see runMore) instead of running
	// it: Extend adds add replicas per arm to the experiment of have that dir's
	// pipeline recorded (a new one when have is 0) and returns the result over
	// all of them.
	More   int
	Extend func(ctx context.Context, dir string, have, add int) (*replicate.Result, string, error)
}

// PipelineDesign is the replicated A/B replay each pipeline of a corpus runs: r
// with a fixed number of replicas per arm. With --until-decided --max-replicas M
// every pipeline runs M replicas per arm in one look: a pipeline that stopped as
// soon as its own difference looked significant would feed the stratified test
// strata whose sizes depend on their data (a stratum stops early exactly when its
// difference looks large), and the conditional Cochran-Mantel-Haenszel and van
// Elteren tests hold their level only for sizes fixed in advance.
func PipelineDesign(r replicate.Request) replicate.Request {
	if r.UntilDecided {
		r.Replicas, r.UntilDecided = max(r.MaxReplicas, r.Replicas), false
	}
	return r
}

// Expand turns the pipeline arguments into absolute, cleaned directories, sorted
// and without duplicates. A pattern matching nothing, an argument that is not a
// directory or no pipelines at all is an ErrBadOptions error.
func Expand(args []string, cwd string) ([]string, error) {
	var dirs []string
	for _, a := range args {
		p := a
		if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		matches := []string{p}
		if strings.ContainsAny(a, "*?[") {
			m, err := filepath.Glob(p)
			if err != nil {
				return nil, errkind.Errorf(ErrBadOptions, "pipeline pattern %q: %v; fix the pattern", a, err)
			}
			if len(m) == 0 {
				return nil, errkind.Errorf(ErrBadOptions, "pipeline pattern %q matches nothing; give directories of recorded pipelines", a)
			}
			matches = m
		}
		for _, m := range matches {
			if fi, err := os.Stat(m); err != nil || !fi.IsDir() {
				return nil, errkind.Errorf(ErrBadOptions, "pipeline %s: not a directory; give the project directories of recorded pipelines", m)
			}
			dirs = append(dirs, filepath.Clean(m))
		}
	}
	if len(dirs) == 0 {
		return nil, errkind.New(ErrBadOptions, "empty corpus: give at least one pipeline directory or pattern")
	}
	slices.Sort(dirs)
	return slices.Compact(dirs), nil
}

// Run carries out the corpus run of r: the pipelines the log does not hold yet,
// one at a time, each appended to the log when it finishes; then the result over
// all of them, written to r.Out.
func Run(r Request) (*Result, error) {
	if r.Out == "" {
		return nil, errkind.New(ErrBadOptions, "--out DIR is required: the directory where the corpus log and result are kept (a rerun continues from it)")
	}
	if r.Ctx == nil {
		r.Ctx = context.Background()
	}
	dirs, err := Expand(r.Args, r.Cwd)
	if err != nil {
		return nil, err
	}
	out := r.Out
	if !filepath.IsAbs(out) {
		out = filepath.Join(r.Cwd, out)
	}
	if r.More > 0 {
		return runMore(r, out, dirs)
	}
	lg, err := openLog(out, LogFile, r.Settings)
	if err != nil {
		return nil, err
	}
	rows, err := runRows(r, lg, dirs, "")
	if err != nil {
		return nil, err
	}
	res := build(r, rows)
	for _, row := range rows {
		if row.Replicas > design(r.Settings) {
			// Extended by --more: the rows are the latest state of each pipeline.
			res.ReplicasPerArm = max(res.ReplicasPerArm, row.Replicas)
		}
	}
	if err := write(out, res); err != nil {
		return nil, err
	}
	return res, nil
}

// runRows replays dirs in order, skipping those lg holds, and appends each
// finished one to lg; label prefixes the progress lines.
func runRows(r Request, lg *corpusLog, dirs []string, label string) ([]Row, error) {
	rows := make([]Row, 0, len(dirs))
	for i, dir := range dirs {
		key := r.Settings.Key(dir)
		if row, ok := lg.done[key]; ok {
			say(r.Info, fmt.Sprintf("[%s%d/%d] %s: finished in an earlier run (%s), skipped.\n", label, i+1, len(dirs), dir, row.Verdict()))
			rows = append(rows, row)
			continue
		}
		say(r.Info, fmt.Sprintf("[%s%d/%d] %s: replaying...\n", label, i+1, len(dirs), dir))
		row, err := runOne(r, dir, key)
		if err != nil {
			if errors.Is(err, context.Canceled) {
				err = fmt.Errorf("interrupted at pipeline %d of %d; the %d finished ones are in %s: run the same command again to continue: %w", i+1, len(dirs), i, lg.path, err)
			}
			return nil, err
		}
		if err := lg.append(row); err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// runOne replays dir; an error Fatal does not claim becomes the row.
func runOne(r Request, dir, key string) (Row, error) {
	if err := r.Ctx.Err(); err != nil {
		return Row{}, err
	}
	res, md, err := r.Run(r.Ctx, dir)
	if err != nil {
		if errors.Is(err, context.Canceled) || r.Ctx.Err() != nil || (r.Fatal != nil && r.Fatal(err)) {
			return Row{}, fmt.Errorf("pipeline %s: %w", dir, err)
		}
		return Row{Pipeline: dir, Key: key, Error: err.Error()}, nil
	}
	return rowOf(dir, key, md, res), nil
}

func say(to func(string), msg string) {
	if to != nil {
		to(msg)
	}
}
