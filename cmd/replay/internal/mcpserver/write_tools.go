package mcpserver

import (
	"os"
	"path/filepath"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Dispatch are the fields of a run that re-dispatches agents, as the flags of
// the same names.
type Dispatch struct {
	Agent        string `json:"agent,omitempty" jsonschema:"re-dispatch with this agent command (or builtin:sim, 'builtin:sim?flake=RATE&seed=N', recorded); without it a resume hands off"`
	AgentTimeout string `json:"agent_timeout,omitempty" jsonschema:"stop an agent call after this Go duration, such as 30m (0: no limit)"`
	Jobs         int    `json:"jobs,omitempty" jsonschema:"run up to this many dispatches of one parallel group at once (default 1)"`
	Reuse        string `json:"reuse,omitempty" jsonschema:"when a recording stands in for a dispatch: exact (default), template or never"`
	Templates    string `json:"templates,omitempty" jsonschema:"directory of the skill's prompt templates"`
	FromPhase    string `json:"from_phase,omitempty" jsonschema:"resume from the boundary of this phase (overrides detection)"`
	FromSeq      int    `json:"from_seq,omitempty" jsonschema:"resume from the start of the phase containing this dispatch seq"`
	// AllowExternal lets a replay run an external role (pushes, deploys, posts) live.
	AllowExternal bool `json:"allow_external,omitempty" jsonschema:"let a replay run dispatches of external roles (pushes, deploys, posts) live; without it they must be served from recordings"`
}

// check refuses an agent the user did not configure and templates outside the roots.
func (d Dispatch) check(p *Policy) error {
	return firstErr(p.agent(d.Agent), p.path("templates", d.Templates))
}

func (d Dispatch) add(a *argv) {
	a.str("agent", d.Agent)
	a.str("agent-timeout", d.AgentTimeout)
	a.num("jobs", d.Jobs)
	a.str("reuse", d.Reuse)
	a.str("templates", d.Templates)
	a.str("from-phase", d.FromPhase)
	a.num("from-seq", d.FromSeq)
	a.flag("allow-external", d.AllowExternal)
}

// ResumeInput is the input of the resume tool (replay [PATH] --yes).
type ResumeInput struct {
	Locate
	Dispatch
	Confirm bool `json:"confirm" jsonschema:"must be true: the resume restores the project's working tree from a checkpoint (after a pre-restore safety checkpoint it prints the undo of). Without confirm: true the call is refused and nothing changes"`
}

// ABInput is the input of the ab tool (replay [PATH] --mutate ORIG=REPL).
type ABInput struct {
	Locate
	Dispatch
	Mutate      []string `json:"mutate" jsonschema:"template substitutions ORIG=REPL (at least one): template ORIG is replaced by file REPL"`
	TemplateRef string   `json:"template_ref,omitempty" jsonschema:"read every template from this git ref of the templates folder's repository"`
	Diff        bool     `json:"diff,omitempty" jsonschema:"write the comparison of original and replayed outcomes (replay-diff.jsonl)"`
	ReplicaRun
}

// ReplicaRun are the fields of a replicated A/B replay, as the flags of the same names.
type ReplicaRun struct {
	Replicas     int    `json:"replicas,omitempty" jsonschema:"replay the baseline and the mutated arm this many times each and decide with statistics (not with diff or template_ref)"`
	MaxReplicas  int    `json:"max_replicas,omitempty" jsonschema:"with until_decided: stop adding replicas at this many per arm in all (default 40)"`
	UntilDecided bool   `json:"until_decided,omitempty" jsonschema:"with replicas: add one replica per arm while the decision is expand"`
	Check        string `json:"check,omitempty" jsonschema:"with replicas: a shell command run in each replica's worktree; its exit status is the replica's outcome"`
	Metric       string `json:"metric,omitempty" jsonschema:"with replicas: the metric the decision compares (duration_s, gate_rounds, findings, input_chars, output_chars)"`
	HTML         string `json:"html,omitempty" jsonschema:"with replicas: also write the report as one self-contained HTML page to this file"`
}

func (r ReplicaRun) add(a *argv) {
	a.num("replicas", r.Replicas)
	a.num("max-replicas", r.MaxReplicas)
	a.flag("until-decided", r.UntilDecided)
	a.str("check", r.Check)
	a.str("metric", r.Metric)
	a.str("html", r.HTML)
}

// ForkInput is the input of the fork tool (replay fork --at SEQ).
type ForkInput struct {
	Locate
	At            int      `json:"at" jsonschema:"the first seq the child does not share with its parent"`
	Substitute    []string `json:"substitute,omitempty" jsonschema:"take FILE as the response of seq SEQ (SEQ=FILE)"`
	Reason        string   `json:"reason,omitempty" jsonschema:"why the fork was made, kept in its lineage record"`
	Agent         string   `json:"agent,omitempty" jsonschema:"then run the child's dispatches from at on with this agent command (or builtin:sim, recorded), in its worktree"`
	Templates     string   `json:"templates,omitempty" jsonschema:"directory of the skill's prompt templates, for dispatches whose file is gone"`
	Jobs          int      `json:"jobs,omitempty" jsonschema:"with agent: run up to this many dispatches of one parallel group at once"`
	AgentTimeout  string   `json:"agent_timeout,omitempty" jsonschema:"with agent: stop an agent call after this Go duration (0: no limit)"`
	AllowExternal bool     `json:"allow_external,omitempty" jsonschema:"with agent: let the continuation run dispatches of external roles live"`
}

// errNotConfirmed is the refusal of a resume called without confirm: true.
const errNotConfirmed = "resume: refused, nothing changed: a resume restores the project's working tree from a checkpoint; " +
	"call plan to see what it would do, then call resume again with confirm: true"

// addWriteTools adds the tools that change a project or write a run's files.
func addWriteTools(s *mcp.Server, run Runner, cmds Commands, pol *Policy) {
	addTool(s, run, writes("resume", "Resume the crashed pipeline: restore the working tree from the resume point's checkpoint behind the branch guard (a pre-restore safety checkpoint first, its undo printed), then hand off or re-dispatch with agent (replay PATH --yes). Needs confirm: true.", true),
		func(in *ResumeInput) ([]string, error) {
			if !in.Confirm {
				return nil, refusal(errNotConfirmed)
			}
			if err := firstErr(in.Locate.check(pol), in.Dispatch.check(pol)); err != nil {
				return nil, err
			}
			a := &argv{}
			in.Locate.add(a)
			in.Dispatch.add(a)
			a.flag("yes", true)
			return a.line(), nil
		}, cmds.Resume)
	addTool(s, run, writes("ab", "A/B replay: re-run the pipeline from its resume point with template mutations in an isolated worktree and compare the outcomes (replay PATH --mutate ORIG=REPL); with replicas, replay both arms N times each and decide with statistics.", false),
		func(in *ABInput) ([]string, error) {
			if len(in.Mutate) == 0 {
				return nil, badInput("ab: give mutate, at least one ORIG=REPL template substitution")
			}
			if in.Agent == "" {
				in.Agent = pol.defaultAgent()
			}
			if err := firstErr(in.Locate.check(pol), in.Dispatch.check(pol), pol.pathAfter("mutate", in.Mutate), pol.check(in.Check), pol.inDir("html", in.HTML, runDir(pol, in.Locate))); err != nil {
				return nil, err
			}
			a := &argv{}
			in.Locate.add(a)
			in.Dispatch.add(a)
			a.strs("mutate", in.Mutate)
			a.str("template-ref", in.TemplateRef)
			a.flag("diff", in.Diff)
			in.ReplicaRun.add(a)
			return a.line(), nil
		}, cmds.AB)
	addTool(s, run, writes("fork", "Make a child run that shares the run up to seq at and may answer some seqs differently, in its own directory and worktree (replay fork --at SEQ).", false),
		func(in *ForkInput) ([]string, error) {
			if err := firstErr(in.Locate.check(pol), pol.agent(in.Agent), pol.path("templates", in.Templates), pol.pathAfter("substitute", in.Substitute)); err != nil {
				return nil, err
			}
			a := &argv{}
			in.Locate.add(a)
			a.str("at", strconv.Itoa(in.At))
			a.strs("substitute", in.Substitute)
			a.str("reason", in.Reason)
			a.str("agent", in.Agent)
			a.str("templates", in.Templates)
			a.num("jobs", in.Jobs)
			a.str("agent-timeout", in.AgentTimeout)
			a.flag("allow-external", in.AllowExternal)
			return a.line("fork"), nil
		}, cmds.Fork)
}

// runDir is the directory of the run a call names, where its outputs may go:
// path when it is a directory, the directory holding it when it is a file, else
// the project's run area (the policy's second root).
func runDir(p *Policy, l Locate) string {
	if l.Path == "" {
		if p != nil && len(p.Roots) > 1 {
			return p.Roots[1]
		}
		return ""
	}
	path := l.Path
	if !filepath.IsAbs(path) && p != nil {
		path = filepath.Join(p.Cwd, path)
	}
	if st, err := os.Stat(path); err == nil && !st.IsDir() {
		return filepath.Dir(path)
	}
	return path
}

// writes describes a tool that writes; destructive when it may replace files of
// the working tree. Its agent may reach out of the machine (the open-world default).
func writes(name, description string, destructive bool) *mcp.Tool {
	return &mcp.Tool{Name: name, Description: description, Annotations: &mcp.ToolAnnotations{DestructiveHint: &destructive}}
}
