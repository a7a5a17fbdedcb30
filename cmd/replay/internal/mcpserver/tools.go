package mcpserver

import (
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Locate are the fields that locate a run, as the flags of the same names.
type Locate struct {
	Path    string `json:"path,omitempty" jsonschema:"the run: a manifest.jsonl, a dispatch directory, a directory holding crucible-dispatch-*/, or a scratch directory with .pipeline-active; relative paths are from the server's working directory; default: the current project's run"`
	Repo    string `json:"repo,omitempty" jsonschema:"project working tree directory (default: the server's working directory)"`
	Scratch string `json:"scratch,omitempty" jsonschema:"scratch directory (default: from the pipeline marker)"`
	Shadow  string `json:"shadow,omitempty" jsonschema:"shadow checkpoint repository (default: beside the scratch directory)"`
	Profile string `json:"profile,omitempty" jsonschema:"pipeline profile: a JSON file or a built-in profile name, instead of the one the run's skill names"`
}

// check refuses a location outside the policy's roots.
func (l Locate) check(p *Policy) error {
	for _, f := range [][2]string{{"path", l.Path}, {"repo", l.Repo}, {"scratch", l.Scratch}, {"shadow", l.Shadow}} {
		if err := p.path(f[0], f[1]); err != nil {
			return err
		}
	}
	return p.profile(l.Profile)
}

func (l Locate) add(a *argv) {
	a.pos(l.Path)
	a.str("repo", l.Repo)
	a.str("scratch", l.Scratch)
	a.str("shadow", l.Shadow)
	a.str("profile", l.Profile)
}

// StatusInput is the input of the status tool (replay status).
type StatusInput struct {
	Dir     string `json:"dir,omitempty" jsonschema:"project directory (default: the server's working directory)"`
	Scratch string `json:"scratch,omitempty" jsonschema:"scratch directory (default: $HOME/.claude/projects/<H>/memory for the project)"`
	Profile string `json:"profile,omitempty" jsonschema:"pipeline profile file or built-in name used to work out the resume point"`
}

// PlanInput is the input of the plan tool (replay plan).
type PlanInput struct {
	Locate
	Explain     bool     `json:"explain,omitempty" jsonschema:"show every check that decided the resume point"`
	FromPhase   string   `json:"from_phase,omitempty" jsonschema:"resume from the boundary of this phase (overrides detection)"`
	FromSeq     int      `json:"from_seq,omitempty" jsonschema:"resume from the start of the phase containing this dispatch seq"`
	Mutate      []string `json:"mutate,omitempty" jsonschema:"template substitutions ORIG=REPL, as an A/B replay would make them"`
	Templates   string   `json:"templates,omitempty" jsonschema:"directory of the skill's prompt templates"`
	TemplateRef string   `json:"template_ref,omitempty" jsonschema:"read every template from this git ref of the templates folder's repository"`
	Overlay     []string `json:"overlay,omitempty" jsonschema:"plan as if seq SEQ had answered FILE (SEQ=FILE); writes nothing"`
}

// StateInput is the input of the state tool (replay state --at SEQ).
type StateInput struct {
	Locate
	At int `json:"at" jsonschema:"the dispatch seq to look at the run from"`
}

// DiffInput is the input of the diff tool (replay diff).
type DiffInput struct {
	Path    string   `json:"path,omitempty" jsonschema:"the run (A), as for plan; default: the current project's run"`
	Other   string   `json:"other,omitempty" jsonschema:"a second run B of the same lineage (a run's path, a fork's directory or a session id) to compare with A"`
	Session string   `json:"session,omitempty" jsonschema:"the A/B replay session to compare (default: the newest); not with other or overlay"`
	Repo    string   `json:"repo,omitempty" jsonschema:"project working tree directory (default: the server's working directory)"`
	Scratch string   `json:"scratch,omitempty" jsonschema:"scratch directory (default: from the pipeline marker)"`
	Overlay []string `json:"overlay,omitempty" jsonschema:"compare as if seq SEQ had answered FILE (SEQ=FILE); writes nothing"`
}

// CheckpointListInput is the input of the checkpoint_list tool.
type CheckpointListInput struct {
	Repo   string `json:"repo,omitempty" jsonschema:"project directory (default: the server's working directory)"`
	Shadow string `json:"shadow,omitempty" jsonschema:"shadow checkpoint repository (default: $HOME/.claude/projects/<H>/checkpoints/<H>)"`
}

// CheckpointShowInput is the input of the checkpoint_show tool.
type CheckpointShowInput struct {
	Ref    string `json:"ref" jsonschema:"the checkpoint: a hash prefix or a reason (the newest of that reason)"`
	Repo   string `json:"repo,omitempty" jsonschema:"project directory (default: the server's working directory)"`
	Shadow string `json:"shadow,omitempty" jsonschema:"shadow checkpoint repository (default: $HOME/.claude/projects/<H>/checkpoints/<H>)"`
}

// VerifyInput is the input of the verify tool (replay verify).
type VerifyInput struct {
	Path   string `json:"path,omitempty" jsonschema:"the run, as for plan; default: the current project's run"`
	Strict bool   `json:"strict,omitempty" jsonschema:"fail (exit kind unfaithful) when any recording is stale, absent or corrupt"`
	Agent  string `json:"agent,omitempty" jsonschema:"a recording made by another agent command than this one is stale"`
}

// readTools are the tools that change nothing on disk, in the order they are listed.
func addReadTools(s *mcp.Server, run Runner, cmds Commands, pol *Policy) {
	addTool(s, run, readOnly("status", "List the crashed or active pipelines of a project with their resume point (replay status)."),
		func(in *StatusInput) ([]string, error) {
			if err := firstErr(pol.path("dir", in.Dir), pol.path("scratch", in.Scratch), pol.profile(in.Profile)); err != nil {
				return nil, err
			}
			a := &argv{}
			a.pos(in.Dir)
			a.str("scratch", in.Scratch)
			a.str("profile", in.Profile)
			return a.line("status"), nil
		}, cmds.Status)
	addTool(s, run, readOnly("plan", "The replay plan of a run: where it crashed, where it resumes and from which checkpoint, the dispatches to skip and to redo, and the checks a real run makes (replay plan). Changes nothing."),
		func(in *PlanInput) ([]string, error) {
			if err := firstErr(in.Locate.check(pol), pol.path("templates", in.Templates), pol.pathAfter("mutate", in.Mutate), pol.pathAfter("overlay", in.Overlay)); err != nil {
				return nil, err
			}
			a := &argv{}
			in.Locate.add(a)
			a.flag("explain", in.Explain)
			a.str("from-phase", in.FromPhase)
			a.num("from-seq", in.FromSeq)
			a.strs("mutate", in.Mutate)
			a.str("templates", in.Templates)
			a.str("template-ref", in.TemplateRef)
			a.strs("overlay", in.Overlay)
			return a.line("plan"), nil
		}, cmds.Plan)
	addTool(s, run, readOnly("state", "The run as it was when dispatch seq AT was sent: phase map, last boundary and its checkpoint, later commits, the reconstructed compression state (replay state --at)."),
		func(in *StateInput) ([]string, error) {
			if err := in.Locate.check(pol); err != nil {
				return nil, err
			}
			a := &argv{}
			in.Locate.add(a)
			a.str("at", strconv.Itoa(in.At))
			return a.line("state"), nil
		}, cmds.State)
	addTool(s, run, readOnly("diff", "Compare a run with one of its A/B replay sessions, or two runs of one lineage (replay diff)."),
		func(in *DiffInput) ([]string, error) {
			if in.Other != "" && in.Path == "" {
				return nil, badInput("diff: other names run B; give path, the run A, with it")
			}
			if err := firstErr(pol.path("path", in.Path), pol.pathOrName("other", in.Other), pol.path("repo", in.Repo), pol.path("scratch", in.Scratch), pol.pathAfter("overlay", in.Overlay)); err != nil {
				return nil, err
			}
			a := &argv{}
			a.pos(in.Path)
			a.pos(in.Other)
			a.str("session", in.Session)
			a.str("repo", in.Repo)
			a.str("scratch", in.Scratch)
			a.strs("overlay", in.Overlay)
			return a.line("diff"), nil
		}, cmds.Diff)
	addTool(s, run, readOnly("checkpoint_list", "List the shadow repository's checkpoints, oldest first (replay checkpoint list)."),
		func(in *CheckpointListInput) ([]string, error) {
			if err := firstErr(pol.path("repo", in.Repo), pol.path("shadow", in.Shadow)); err != nil {
				return nil, err
			}
			a := &argv{}
			a.str("repo", in.Repo)
			a.str("shadow", in.Shadow)
			return a.line("checkpoint", "list"), nil
		}, cmds.CheckpointList)
	addTool(s, run, readOnly("checkpoint_show", "Show one checkpoint and the files changed since the one before (replay checkpoint show)."),
		func(in *CheckpointShowInput) ([]string, error) {
			if in.Ref == "" {
				return nil, badInput("checkpoint_show: give ref, a checkpoint's hash prefix or reason (checkpoint_list lists them)")
			}
			if err := firstErr(pol.path("repo", in.Repo), pol.path("shadow", in.Shadow)); err != nil {
				return nil, err
			}
			a := &argv{}
			a.pos(in.Ref)
			a.str("repo", in.Repo)
			a.str("shadow", in.Shadow)
			return a.line("checkpoint", "show"), nil
		}, cmds.CheckpointShow)
	addTool(s, run, readOnly("verify", "Classify the recordings of a run's dispatches as valid, stale, absent or corrupt (replay verify)."),
		func(in *VerifyInput) ([]string, error) {
			if err := pol.path("path", in.Path); err != nil {
				return nil, err
			}
			a := &argv{}
			a.pos(in.Path)
			a.flag("strict", in.Strict)
			a.str("agent", in.Agent)
			return a.line("verify"), nil
		}, cmds.Verify)
}

// firstErr is the first of errs that is not nil.
func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// readOnly describes a tool that changes nothing.
func readOnly(name, description string) *mcp.Tool {
	no := false
	return &mcp.Tool{Name: name, Description: description, Annotations: &mcp.ToolAnnotations{
		ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: &no,
	}}
}
