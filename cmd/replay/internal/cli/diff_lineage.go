package cli

import (
	"github.com/replaytool/replay/internal/paths"

	"github.com/replaytool/replay/fork"
	"github.com/replaytool/replay/internal/errkind"
	"github.com/replaytool/replay/pipeline"
)

// lineageDiffRun compares two runs of one lineage, or a run with an overlay of it.
func lineageDiffRun(opts *DiffOptions) error {
	f := opts.env()
	nowFn, err := f.Now()
	if err != nil {
		return err
	}
	cwd, err := f.Getwd()
	if err != nil {
		return err
	}
	pl, sessA, err := loadRun(f, opts.PipelineFlags)
	if err != nil {
		return err
	}
	a, err := fork.Open(pl, sessA)
	if err != nil {
		return err
	}
	b := a
	if opts.Other != "" {
		sessB, err := otherRun(f, opts, pl)
		if err != nil {
			return err
		}
		if b, err = fork.Open(pl, sessB); err != nil {
			return err
		}
	}
	filesOf := b.Session // an overlay changes answers, not files: its files are its base run's
	if len(opts.Overlays) > 0 {
		if b, err = fork.Overlay(pl, b, opts.Overlays, cwd); err != nil {
			return err
		}
	}
	c, err := fork.CompareRuns(pl, a, b, nowFn())
	if err != nil {
		return err
	}
	stats, note := fork.ArtifactDiffRuns(pl, a.Session, filesOf)
	if note != "" {
		f.Warnf("artifact diff: %s", note)
	}
	d := c.Report(stats)
	return printDiff(f, d)
}

// otherRun resolves the second run of `replay diff A B`: a path to a run or a fork
// of the same lineage as pl, or a session id of pl's tree of runs.
func otherRun(f *runEnv, opts *DiffOptions, pl *pipeline.Pipeline) (string, error) {
	cwd, err := f.Getwd()
	if err != nil {
		return "", err
	}
	arg := paths.ResolveArg(cwd, opts.Other) // the rule the MCP policy confines by
	if arg.Kind == paths.ArgName {
		return opts.Other, nil // a session id; fork.Open names the known runs when it is none
	}
	pf := opts.PipelineFlags
	pf.Path = arg.Path
	other, sess, err := loadRun(f, pf)
	if err != nil {
		return "", err
	}
	if other.Location.SessionID != pl.Location.SessionID {
		return "", errkind.Errorf(fork.ErrBadFork, "diff: %s is a run of session %s and %s one of session %s; give two runs of one lineage (see replay lineage)",
			opts.Path, pl.Location.SessionID, opts.Other, other.Location.SessionID)
	}
	return sess, nil
}
