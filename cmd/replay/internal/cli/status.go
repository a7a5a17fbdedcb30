package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/replaytool/replay/manifest"
	"github.com/replaytool/replay/pipeline"
	"github.com/replaytool/replay/report"
	"github.com/replaytool/replay/resume"
	"github.com/replaytool/replay/templates"
)

// StatusOptions are the arguments of `replay status`.
type StatusOptions struct {
	cmdBase
	Dir     string
	Scratch string
	// Profile is the --profile file used to work out the resume point.
	Profile string
}

// NewCmdStatus builds `replay status [DIR]`.
func NewCmdStatus(f *Factory, runF func(*StatusOptions) error) *cobra.Command {
	opts := &StatusOptions{cmdBase: baseOf(f)}
	cmd := &cobra.Command{
		Use:   "status [DIR]",
		Short: "List crashed or active pipelines of a project, with their resume point",
		Long: `List the pipelines of the project at DIR (default: the current directory) whose
.pipeline-active marker was left behind (the sign of a crash or of a run still
going), with skill, phase, start, branch and the resume point. Finding none is not
an error.
` + exitStatusFor("status"),
		Example: `  replay status
  replay status ~/src/app --json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Dir = args[0]
			}
			return runCommand(cmd, &opts.Global, opts, runF, statusRun)
		},
	}
	cmd.Flags().StringVar(&opts.Scratch, "scratch", "", "scratch directory `DIR` (default: $HOME/.claude/projects/<H>/memory for the project)")
	addProfileFlag(cmd, &opts.Profile)
	return cmd
}

// PipelineStatus is one pipeline `replay status` found.
type PipelineStatus struct {
	Session       string   `json:"session"`
	Skill         string   `json:"skill"`
	Phase         string   `json:"phase"`
	Started       string   `json:"started"`
	Branch        string   `json:"branch"`
	Manifest      string   `json:"manifest"`
	ResumePoint   string   `json:"resume_point"`
	CrashedAt     string   `json:"crashed_at"`
	Redo          int      `json:"redo"`
	Profile       string   `json:"profile,omitempty"`
	ProfileReason string   `json:"profile_reason,omitempty"`
	Warnings      []string `json:"warnings,omitempty"`
	Error         string   `json:"error,omitempty"`
}

func statusRun(opts *StatusOptions) error {
	f := opts.env()
	if opts.Profile != "" {
		if _, err := templates.LoadFlag(opts.Profile); err != nil {
			return usageError("--profile: %v; fix the file or leave --profile out to use the profile the run names", err)
		}
	}
	cwd, err := f.Getwd()
	if err != nil {
		return err
	}
	dir := opts.Dir
	if dir == "" {
		dir = cwd
	} else if !filepath.IsAbs(dir) {
		dir = filepath.Join(cwd, dir)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		// A mistyped DIR must not read as "no pipeline here".
		return usageError("%s: no such project directory; give the project's directory (default: the current one)", dir)
	}
	if f.Getenv("HOME") == "" && opts.Scratch == "" {
		return usageError("HOME is not set, so the pipeline's scratch directory (~/.claude/projects/<H>/memory) cannot be found; set HOME, or give the scratch directory with --scratch DIR")
	}
	scratch := (&pipeline.Locator{Home: f.Getenv("HOME"), Cwd: cwd, Repo: dir, Scratch: opts.Scratch}).ScratchDir()
	found := []PipelineStatus{}
	f.Verbosef("project %s; looking for %s or %s* in %s", dir, manifest.MarkerFile, manifest.DispatchActivePrefix, scratch)
	if hasPipeline(scratch) {
		found = append(found, statusOf(f, scratch, dir, opts.Profile))
		// Every other session of the project too: two runs (a /build and a
		// /debugging run) share the scratch dir, one found only by its
		// .dispatch-active-<sid>.
		ro := manifest.ResolveOptions{Home: f.Getenv("HOME"), Tmp: tmpDir(f), SysTmp: sysTmpDir(f), Cwd: cwd}
		for _, sd := range manifest.Sessions(scratch, ro) {
			if sd.Session == found[0].Session {
				continue
			}
			found = append(found, sessionStatus(f, sd, scratch, dir, opts.Profile))
		}
	}
	if f.Global.JSON {
		return report.WriteJSON(f.IO.Out, struct {
			Project   string           `json:"project"`
			Scratch   string           `json:"scratch"`
			Pipelines []PipelineStatus `json:"pipelines"`
		}{dir, scratch, found})
	}
	out := f.IO.Out
	if len(found) == 0 {
		_, err := fmt.Fprintf(out, "No crashed or active pipeline for %s (no %s or %s* in %s).\n", dir, manifest.MarkerFile, manifest.DispatchActivePrefix, scratch)
		return err
	}
	rows := make([][]string, 0, len(found))
	for _, s := range found {
		resumeAt := s.ResumePoint
		if s.Error != "" {
			resumeAt = "cannot tell: " + s.Error
		}
		rows = append(rows, []string{s.Session, s.Skill, s.Phase, s.Started, s.Branch, resumeAt})
	}
	if _, err := fmt.Fprintf(out, "Pipelines left behind for %s:\n\n", dir); err != nil {
		return err
	}
	if err := f.TableStyle().Write(out, []string{"Session", "Skill", "Phase", "Started", "Branch", "Resume point"}, rows); err != nil {
		return err
	}
	for _, s := range found {
		if s.Error == "" {
			target := scratch
			if s.Session != found[0].Session {
				target = filepath.Dir(s.Manifest)
			}
			fmt.Fprintf(out, "\n%s\nProfile: %s (%s)\nPlan it: replay plan %s\n", crashSentence(s), report.Safe(s.Profile), report.Safe(s.ProfileReason), report.Safe(target))
		}
	}
	return nil
}

// hasPipeline reports whether a scratch dir holds the marker of a pipeline left
// behind: .pipeline-active, or only a .dispatch-active-<sid> file.
func hasPipeline(scratch string) bool {
	if _, err := os.Stat(filepath.Join(scratch, manifest.MarkerFile)); err == nil {
		return true
	}
	sids, err := manifest.ReadDispatchActive(scratch)
	return err == nil && len(sids) > 0
}

// statusOf describes the pipeline of one scratch dir; a pipeline that cannot be
// analysed is still listed, with the reason.
func statusOf(f *runEnv, scratch, project, profile string) PipelineStatus {
	var s PipelineStatus
	if m, err := manifest.ReadMarker(filepath.Join(scratch, manifest.MarkerFile)); err == nil {
		s = PipelineStatus{Session: m.PipelineID, Skill: m.Skill, Phase: m.Phase, Started: m.StartTime, Branch: m.Branch}
	}
	a, _, err := decide(f, PipelineFlags{Path: scratch, Repo: project, Scratch: scratch, Profile: profile}, nil)
	if err != nil {
		s.Error = err.Error()
		return s
	}
	pl := a.Pipeline
	s.Profile, s.ProfileReason = resume.ProfileName(pl.Profile), pl.ProfileReason
	plan := resume.BuildPlan(a, nil)
	s.Manifest, s.ResumePoint, s.CrashedAt, s.Redo = plan.Source, plan.ResumePoint, plan.CrashedAt, len(plan.Redo)
	s.Warnings = plan.Warnings
	if s.Session == "" {
		s.Session = plan.Session
	}
	if s.Skill == "" {
		s.Skill = plan.Skill
	}
	return s
}

// sessionStatus describes another session of the scratch dir, read from its
// dispatch directory.
func sessionStatus(f *runEnv, sd manifest.SessionDir, scratch, project, profile string) PipelineStatus {
	s := PipelineStatus{Session: sd.Session}
	a, _, err := decide(f, PipelineFlags{Path: sd.Dir, Repo: project, Scratch: scratch, Profile: profile}, nil)
	if err != nil {
		s.Error = err.Error()
		return s
	}
	pl := a.Pipeline
	s.Profile, s.ProfileReason = resume.ProfileName(pl.Profile), pl.ProfileReason
	plan := resume.BuildPlan(a, nil)
	s.Manifest, s.ResumePoint, s.CrashedAt, s.Redo = plan.Source, plan.ResumePoint, plan.CrashedAt, len(plan.Redo)
	s.Warnings, s.Skill = plan.Warnings, plan.Skill
	return s
}

// crashSentence says where a pipeline stopped and what a resume re-executes. A run
// with nothing incomplete did not crash at anything: it says so, and why dispatches
// would still be re-executed (the resume point, moved back by a failed check).
func crashSentence(s PipelineStatus) string {
	redo := report.Count(s.Redo, "dispatch")
	if rest, ok := strings.CutPrefix(s.CrashedAt, "nothing incomplete"); ok {
		if s.Redo == 0 {
			return fmt.Sprintf("Session %s left nothing incomplete%s; nothing to re-execute.", report.Safe(s.Session), report.Safe(rest))
		}
		return fmt.Sprintf("Session %s left nothing incomplete%s, yet a resume would re-execute %s from %s.", report.Safe(s.Session), report.Safe(rest), redo, report.Safe(s.ResumePoint))
	}
	return fmt.Sprintf("Session %s crashed at %s; %s to re-execute.", report.Safe(s.Session), report.Safe(s.CrashedAt), redo)
}
