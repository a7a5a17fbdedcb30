package corpus

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/replaytool/replay/internal/errkind"
	"github.com/replaytool/replay/internal/runfile"
	"github.com/replaytool/replay/internal/safewrite"
	"github.com/replaytool/replay/replicate"
)

// A corpus experiment is its --out log: the header's settings say what it
// compares and with what, its pipeline lines what each pipeline replayed. --more
// N extends it, never restarts it: every pipeline gets N more replicas per arm,
// continuing its own replicated experiment (the replicas take the next indices),
// and the corpus decision is over all of them. The decision's e-processes depend
// only on the counts of pairs won and lost, so however often the user extends
// and looks, the chance of a false ADOPT or REJECT stays at most alpha.
//
// The log records each extension as a line {"kind":"more","more":N,
// "replicas_per_arm":T} before any pipeline is extended, and each extended
// pipeline as a new pipeline line under its key (the latest line of a key is
// the pipeline's state). A --more that finds the last extension unfinished
// (killed, or a pipeline that failed) finishes it instead of adding N again:
// the same command again after a kill continues, as it does for a corpus run.

// moreLine is an extension line of the corpus log.
type moreLine struct {
	Kind   string `json:"kind"`
	More   int    `json:"more"`
	Target int    `json:"replicas_per_arm"`
}

const moreKind = "more"

// design is the replicas per arm a corpus run of s gives every pipeline.
func design(s Settings) int {
	if s.UntilDecided {
		return max(s.MaxReplicas, s.Replicas)
	}
	return s.Replicas
}

// experimentState is what a corpus log holds beyond parseLog's rows: its
// header, the replicas per arm its last extension aimed at (the design when it
// was never extended), and each pipeline's latest row that has replicas.
type experimentState struct {
	header Settings
	target int
	good   map[string]Row
}

// readExperiment reads the corpus log at path for --more; a missing log is an
// ErrBadOptions error saying how to start one.
func readExperiment(path string, more int) (*experimentState, error) {
	data, err := runfile.ReadFile(path, logKind)
	if errors.Is(err, os.ErrNotExist) {
		return nil, errkind.Errorf(ErrBadOptions, "--more %d: %s holds no corpus experiment to continue; start one with --replicas N (without --more)", more, path)
	}
	if err != nil {
		return nil, fmt.Errorf("corpus log %s: %w", path, err)
	}
	st := &experimentState{good: map[string]Row{}}
	for i, raw := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(raw)) == 0 {
			continue
		}
		var l struct {
			logLine
			More   int `json:"more"`
			Target int `json:"replicas_per_arm"`
		}
		if err := json.Unmarshal(raw, &l); err != nil {
			if i == 0 {
				return nil, errkind.Errorf(ErrMismatch, "%s:1: not a corpus log header (%v); give another --out", path, err)
			}
			continue // torn by a kill: parseLog passes it over too
		}
		switch {
		case i == 0 && (l.Kind != "corpus" || l.Settings == nil):
			return nil, errkind.Errorf(ErrMismatch, "%s:1: not a corpus log header; give another --out", path)
		case i == 0:
			st.header = *l.Settings
			st.target = design(st.header)
		case l.Kind == moreKind && l.Target > st.target:
			st.target = l.Target
		case l.Kind == "pipeline" && l.Row != nil && l.Row.Key != "" && l.Row.Decision != nil && l.Row.Replicas > 0:
			st.good[l.Row.Key] = *l.Row
		}
	}
	if st.target < 1 {
		return nil, errkind.Errorf(ErrMismatch, "%s:1: the header gives %d replicas per arm; give another --out", path, st.target)
	}
	return st, nil
}

// runMore carries out r.More on the experiment in out (see the comment above).
func runMore(r Request, out string, dirs []string) (*Result, error) {
	if r.Extend == nil {
		return nil, errkind.New(ErrBadOptions, "--more: this corpus run cannot extend pipelines (no Extend)")
	}
	path := filepath.Join(out, LogFile)
	st, err := readExperiment(path, r.More)
	if err != nil {
		return nil, err
	}
	// The design is the experiment's, not this command's: --more gives none.
	r.Settings.Replicas, r.Settings.UntilDecided, r.Settings.MaxReplicas = st.header.Replicas, st.header.UntilDecided, st.header.MaxReplicas
	lg, err := openLog(out, LogFile, r.Settings)
	if err != nil {
		return nil, err
	}
	have := func(dir string) int { return st.good[r.Settings.Key(dir)].Replicas }
	unfinished := 0
	for _, dir := range dirs {
		if have(dir) < st.target {
			unfinished++
		}
	}
	from := st.target
	if unfinished > 0 {
		say(r.Info, fmt.Sprintf("The corpus experiment in %s was left short of %d replicas per arm in %d of its %d pipelines (a kill, or a pipeline that failed): finishing that first; run --more %d again afterwards to add more.\n",
			out, st.target, unfinished, len(dirs), r.More))
		for _, dir := range dirs {
			from = min(from, have(dir))
		}
	} else {
		st.target += r.More
		b, _ := json.Marshal(moreLine{Kind: moreKind, More: r.More, Target: st.target})
		if err := safewrite.AppendLine(lg.path, b); err != nil {
			return nil, err
		}
		say(r.Info, fmt.Sprintf("Continuing the corpus experiment in %s: %d replicas per arm in each of its %d pipelines so far; adding %d more per arm (to %d).\n",
			out, from, len(dirs), r.More, st.target))
	}
	rows := make([]Row, 0, len(dirs))
	for i, dir := range dirs {
		key := r.Settings.Key(dir)
		n := have(dir)
		if n >= st.target {
			say(r.Info, fmt.Sprintf("[%d/%d] %s: at %d replicas per arm already, skipped.\n", i+1, len(dirs), dir, n))
			rows = append(rows, st.good[key])
			continue
		}
		say(r.Info, fmt.Sprintf("[%d/%d] %s: adding %d replicas per arm to %d...\n", i+1, len(dirs), dir, st.target-n, n))
		row, err := extendOne(r, dir, key, n, st.target-n)
		if err != nil {
			if errors.Is(err, context.Canceled) {
				err = fmt.Errorf("interrupted at pipeline %d of %d; run the same command again to finish the extension to %d replicas per arm: %w", i+1, len(dirs), st.target, err)
			}
			return nil, err
		}
		if err := lg.append(row); err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	res := build(r, rows)
	res.ReplicasPerArm, res.Continued = st.target, from
	if err := write(out, res); err != nil {
		return nil, err
	}
	return res, nil
}

// extendOne adds add replicas per arm to dir's experiment of have (a new one
// when have is 0); an error Fatal does not claim becomes the row.
func extendOne(r Request, dir, key string, have, add int) (Row, error) {
	if err := r.Ctx.Err(); err != nil {
		return Row{}, err
	}
	res, md, err := r.Extend(r.Ctx, dir, have, add)
	if err == nil && len(res.Replicas) != 2*(have+add) {
		err = fmt.Errorf("extended to %d replicas per arm, not %d", len(res.Replicas)/2, have+add)
	}
	if err != nil {
		if errors.Is(err, context.Canceled) || r.Ctx.Err() != nil || (r.Fatal != nil && r.Fatal(err)) {
			return Row{}, fmt.Errorf("pipeline %s: %w", dir, err)
		}
		return Row{Pipeline: dir, Key: key, Error: err.Error()}, nil
	}
	return rowOf(dir, key, md, res), nil
}

// ExtendDesign is the replicated A/B replay that adds add replicas per arm to a
// pipeline's experiment of a corpus: r with exactly that many, in one look.
func ExtendDesign(r replicate.Request, add int) replicate.Request {
	r.Replicas, r.UntilDecided = add, false
	return r
}
