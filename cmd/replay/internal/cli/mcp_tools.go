package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/replaytool/replay/cmd/replay/internal/mcpserver"
	"github.com/replaytool/replay/internal/exitcode"
	"github.com/replaytool/replay/internal/iostreams"
	"github.com/replaytool/replay/internal/prompt"
)

// mcpCommands are the MCP tools that run in process: each builds its command's
// options from the tool's checked input, validates them as the command's RunE
// does, and calls the command's own run function on a call factory (see
// callFactory). Every tool has its entry; toolRunner serves a tool that has none.
func (o *MCPOptions) mcpCommands() mcpserver.Commands {
	return mcpserver.Commands{
		Status:         o.mcpStatus,
		Plan:           o.mcpPlan,
		State:          o.mcpState,
		Diff:           o.mcpDiff,
		CheckpointList: o.mcpCheckpointList,
		CheckpointShow: o.mcpCheckpointShow,
		Verify:         o.mcpVerify,
		Resume:         o.mcpResume,
		AB:             o.mcpAB,
		Fork:           o.mcpFork,
	}
}

// mcpStatus runs replay status for its tool.
func (o *MCPOptions) mcpStatus(ctx context.Context, in mcpserver.StatusInput) mcpserver.Outcome {
	return o.callCommand(ctx, "replay status", func(c *Factory, g globalOptions) error {
		return statusRun(&StatusOptions{cmdBase: callBase(c, g), Dir: in.Dir, Scratch: in.Scratch, Profile: in.Profile})
	})
}

// mcpPlan runs replay plan for its tool.
func (o *MCPOptions) mcpPlan(ctx context.Context, in mcpserver.PlanInput) mcpserver.Outcome {
	return o.callCommand(ctx, "replay plan", func(c *Factory, g globalOptions) error {
		opts := &PlanOptions{cmdBase: callBase(c, g), PipelineFlags: locateFlags(in.Locate), RunFlags: runFlagDefaults}
		pf := &opts.PipelineFlags
		pf.Explain, pf.FromPhase, pf.FromSeq, pf.Mutations, pf.Overlays = in.Explain, in.FromPhase, in.FromSeq, in.Mutate, in.Overlay
		opts.Templates, opts.TemplateRef = in.Templates, in.TemplateRef
		if err := opts.RunFlags.validate(opts.Mutations); err != nil {
			return err
		}
		return planRun(opts)
	})
}

// mcpState runs replay state --at for its tool.
func (o *MCPOptions) mcpState(ctx context.Context, in mcpserver.StateInput) mcpserver.Outcome {
	return o.callCommand(ctx, "replay state", func(c *Factory, g globalOptions) error {
		return stateRun(&StateOptions{cmdBase: callBase(c, g), PipelineFlags: locateFlags(in.Locate), At: in.At})
	})
}

// mcpDiff runs replay diff for its tool.
func (o *MCPOptions) mcpDiff(ctx context.Context, in mcpserver.DiffInput) mcpserver.Outcome {
	return o.callCommand(ctx, "replay diff", func(c *Factory, g globalOptions) error {
		opts := &DiffOptions{cmdBase: callBase(c, g), PipelineFlags: PipelineFlags{Path: in.Path, Repo: in.Repo, Scratch: in.Scratch},
			Session: in.Session, Other: in.Other, Overlays: in.Overlay}
		if err := opts.validate(); err != nil {
			return err
		}
		return diffCommandRun(opts)
	})
}

// mcpCheckpointList runs replay checkpoint list for its tool.
func (o *MCPOptions) mcpCheckpointList(ctx context.Context, in mcpserver.CheckpointListInput) mcpserver.Outcome {
	return o.callCommand(ctx, "replay checkpoint list", func(c *Factory, g globalOptions) error {
		return checkpointListRun(&CheckpointListOptions{CheckpointOptions{cmdBase: callBase(c, g), Repo: in.Repo, Shadow: in.Shadow}})
	})
}

// mcpCheckpointShow runs replay checkpoint show for its tool.
func (o *MCPOptions) mcpCheckpointShow(ctx context.Context, in mcpserver.CheckpointShowInput) mcpserver.Outcome {
	return o.callCommand(ctx, "replay checkpoint show", func(c *Factory, g globalOptions) error {
		return checkpointShowRun(&CheckpointShowOptions{CheckpointOptions{cmdBase: callBase(c, g), Repo: in.Repo, Shadow: in.Shadow}, in.Ref})
	})
}

// mcpVerify runs replay verify for its tool.
func (o *MCPOptions) mcpVerify(ctx context.Context, in mcpserver.VerifyInput) mcpserver.Outcome {
	return o.callCommand(ctx, "replay verify", func(c *Factory, g globalOptions) error {
		return verifyRun(&VerifyOptions{cmdBase: callBase(c, g), PipelineFlags: PipelineFlags{Path: in.Path}, Strict: in.Strict, Agent: in.Agent})
	})
}

// mcpResume runs replay PATH --yes for its tool.
func (o *MCPOptions) mcpResume(ctx context.Context, in mcpserver.ResumeInput) mcpserver.Outcome {
	return o.callCommand(ctx, "replay", func(c *Factory, g globalOptions) error {
		opts := &ResumeOptions{cmdBase: callBase(c, g), Prompter: c.Prompter, Environ: c.Environ, PipelineFlags: locateFlags(in.Locate)}
		if err := dispatchFlags(&opts.PipelineFlags, &opts.RunFlags, in.Dispatch); err != nil {
			return err
		}
		opts.Yes = true
		if err := opts.RunFlags.validate(opts.Mutations); err != nil {
			return err
		}
		return resumeRun(opts)
	})
}

// mcpAB runs an A/B replay, replicated with replicas for its tool.
func (o *MCPOptions) mcpAB(ctx context.Context, in mcpserver.ABInput) mcpserver.Outcome {
	return o.callCommand(ctx, "replay", func(c *Factory, g globalOptions) error {
		opts := &ResumeOptions{cmdBase: callBase(c, g), Prompter: c.Prompter, Environ: c.Environ, PipelineFlags: locateFlags(in.Locate), ReplicaFlags: replicaFlagDefaults}
		if err := dispatchFlags(&opts.PipelineFlags, &opts.RunFlags, in.Dispatch); err != nil {
			return err
		}
		opts.Mutations, opts.TemplateRef, opts.Diff = in.Mutate, in.TemplateRef, in.Diff
		r := in.ReplicaRun
		rf := &opts.ReplicaFlags
		rf.Replicas, rf.ReplicasSet, rf.UntilDecided, rf.Check, rf.HTML = r.Replicas, r.Replicas != 0, r.UntilDecided, r.Check, r.HTML
		if r.MaxReplicas != 0 {
			rf.MaxReplicas = r.MaxReplicas
		}
		if r.Metric != "" {
			rf.Metric = r.Metric
		}
		given := map[string]bool{"max-replicas": r.MaxReplicas != 0, "until-decided": r.UntilDecided, "check": r.Check != "", "metric": r.Metric != "", "html": r.HTML != ""}
		if err := opts.RunFlags.validate(opts.Mutations); err != nil {
			return err
		}
		if err := rf.validate(func(name string) bool { return given[name] }, opts.RunFlags); err != nil {
			return err
		}
		return resumeRun(opts)
	})
}

// mcpFork runs replay fork --at for its tool.
func (o *MCPOptions) mcpFork(ctx context.Context, in mcpserver.ForkInput) mcpserver.Outcome {
	return o.callCommand(ctx, "replay fork", func(c *Factory, g globalOptions) error {
		opts := &ForkOptions{cmdBase: callBase(c, g), Prompter: c.Prompter, Environ: c.Environ, PipelineFlags: locateFlags(in.Locate), At: in.At, Substitutions: in.Substitute,
			Reason: in.Reason, Agent: in.Agent, Templates: in.Templates, Jobs: runFlagDefaults.Jobs,
			AgentTimeout: runFlagDefaults.AgentTimeout, AllowExternal: in.AllowExternal}
		if in.Jobs != 0 {
			opts.Jobs = in.Jobs
		}
		var err error
		if opts.AgentTimeout, err = agentTimeout(in.AgentTimeout, opts.AgentTimeout); err != nil {
			return err
		}
		if err := opts.validate(); err != nil {
			return err
		}
		return forkRun(opts)
	})
}

// locateFlags are the pipeline flags a tool's Locate fields stand for.
func locateFlags(l mcpserver.Locate) PipelineFlags {
	return PipelineFlags{Path: l.Path, Repo: l.Repo, Scratch: l.Scratch, Shadow: l.Shadow, Profile: l.Profile}
}

// dispatchFlags sets the flags a tool's Dispatch fields stand for, over their
// defaults; a bad agent_timeout is a usage error.
func dispatchFlags(pf *PipelineFlags, rf *RunFlags, d mcpserver.Dispatch) error {
	*rf = runFlagDefaults
	pf.FromPhase, pf.FromSeq = d.FromPhase, d.FromSeq
	rf.Agent, rf.Templates, rf.AllowExternal = d.Agent, d.Templates, d.AllowExternal
	if d.Jobs != 0 {
		rf.Jobs = d.Jobs
	}
	if d.Reuse != "" {
		rf.Reuse = d.Reuse
	}
	var err error
	rf.AgentTimeout, err = agentTimeout(d.AgentTimeout, rf.AgentTimeout)
	return err
}

// agentTimeout is a tool's agent_timeout, def when not given; one that is not a
// Go duration is a usage error.
func agentTimeout(s string, def time.Duration) (time.Duration, error) {
	if s == "" {
		return def, nil
	}
	t, err := time.ParseDuration(s)
	if err != nil {
		return 0, usageError("agent_timeout %q is not a duration; give one such as 30m (0: no limit)", s)
	}
	return t, nil
}

// callCommand runs one command in process for a tool call: run is given a call
// factory and the call's global flags, and what it printed comes back with its
// exit code and error line as the command line would give them. path names the
// command in a usage hint.
func (o *MCPOptions) callCommand(ctx context.Context, path string, run func(*Factory, globalOptions) error) mcpserver.Outcome {
	c, out, errOut := o.callFactory(ctx)
	code, msg := exitcode.OK, ""
	if err := run(c, o.callGlobals()); err != nil {
		var script *scriptError
		if errors.As(err, &script) {
			fmt.Fprintln(errOut, script.msg)
			code, msg = script.code, script.msg
		} else {
			code, msg = printError(c, err, path == "replay" || path == "replay plan", path)
		}
	}
	return mcpserver.Outcome{Stdout: out.Bytes(), Stderr: errOut.String(), Code: code, Kind: exitcode.Name(code), Err: msg}
}

// callGlobals are a tool call's global flags: --json, and the server's --now,
// --quiet and --verbose.
func (o *MCPOptions) callGlobals() globalOptions {
	return globalOptions{Now: o.Global.Now, JSON: true, Quiet: o.Global.Quiet, Verbose: o.Global.Verbose}
}

// callBase is what a command's options take from a tool call's factory and its
// global flags: the part every command's constructor fills from its factory
// (baseOf) and the flags it parses.
func callBase(c *Factory, g globalOptions) cmdBase {
	b := baseOf(c)
	b.Global = g
	return b
}

// callFactory is a fresh factory for one tool call: streams that are buffers,
// nobody to prompt, the call's context, and the server's environment, working
// directory and clock. Calls share nothing but those read-only values, so they
// may run concurrently.
func (o *MCPOptions) callFactory(ctx context.Context) (*Factory, *bytes.Buffer, *bytes.Buffer) {
	var out, errOut bytes.Buffer
	ios := &iostreams.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	ios.SetEnv(o.Getenv)
	return &Factory{
		IOStreams: ios,
		Prompter:  func() prompt.Prompter { return nil },
		Getenv:    o.Getenv,
		Getwd:     o.Getwd,
		Environ:   o.Environ,
		Clock:     o.Clock,
		envMapped: true,
		ctx:       ctx,
	}, &out, &errOut
}
