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
// callFactory). The tools it leaves out run their command line (toolRunner).
func (f *Factory) mcpCommands() mcpserver.Commands {
	return mcpserver.Commands{
		Status: func(ctx context.Context, in mcpserver.StatusInput) mcpserver.Outcome {
			return f.callCommand(ctx, "replay status", func(c *Factory) error {
				return statusRun(&StatusOptions{Factory: c, Dir: in.Dir, Scratch: in.Scratch, Profile: in.Profile})
			})
		},
		Plan: func(ctx context.Context, in mcpserver.PlanInput) mcpserver.Outcome {
			return f.callCommand(ctx, "replay plan", func(c *Factory) error {
				opts := &PlanOptions{Factory: c, PipelineFlags: locateFlags(in.Locate), RunFlags: runFlagDefaults}
				pf := &opts.PipelineFlags
				pf.Explain, pf.FromPhase, pf.FromSeq, pf.Mutations, pf.Overlays = in.Explain, in.FromPhase, in.FromSeq, in.Mutate, in.Overlay
				opts.Templates, opts.TemplateRef = in.Templates, in.TemplateRef
				if err := opts.RunFlags.validate(opts.Mutations); err != nil {
					return err
				}
				return planRun(opts)
			})
		},
		State: func(ctx context.Context, in mcpserver.StateInput) mcpserver.Outcome {
			return f.callCommand(ctx, "replay state", func(c *Factory) error {
				return stateRun(&StateOptions{Factory: c, PipelineFlags: locateFlags(in.Locate), At: in.At})
			})
		},
		Diff: func(ctx context.Context, in mcpserver.DiffInput) mcpserver.Outcome {
			return f.callCommand(ctx, "replay diff", func(c *Factory) error {
				opts := &DiffOptions{Factory: c, PipelineFlags: PipelineFlags{Path: in.Path, Repo: in.Repo, Scratch: in.Scratch},
					Session: in.Session, Other: in.Other, Overlays: in.Overlay}
				if err := opts.validate(); err != nil {
					return err
				}
				return diffCommandRun(opts)
			})
		},
		CheckpointList: func(ctx context.Context, in mcpserver.CheckpointListInput) mcpserver.Outcome {
			return f.callCommand(ctx, "replay checkpoint list", func(c *Factory) error {
				return checkpointListRun(&CheckpointListOptions{CheckpointOptions{Factory: c, Repo: in.Repo, Shadow: in.Shadow}})
			})
		},
		CheckpointShow: func(ctx context.Context, in mcpserver.CheckpointShowInput) mcpserver.Outcome {
			return f.callCommand(ctx, "replay checkpoint show", func(c *Factory) error {
				return checkpointShowRun(&CheckpointShowOptions{CheckpointOptions{Factory: c, Repo: in.Repo, Shadow: in.Shadow}, in.Ref})
			})
		},
		Verify: func(ctx context.Context, in mcpserver.VerifyInput) mcpserver.Outcome {
			return f.callCommand(ctx, "replay verify", func(c *Factory) error {
				return verifyRun(&VerifyOptions{Factory: c, PipelineFlags: PipelineFlags{Path: in.Path}, Strict: in.Strict, Agent: in.Agent})
			})
		},
		Resume: func(ctx context.Context, in mcpserver.ResumeInput) mcpserver.Outcome {
			return f.callCommand(ctx, "replay", func(c *Factory) error {
				opts := &ResumeOptions{Factory: c, PipelineFlags: locateFlags(in.Locate)}
				if err := dispatchFlags(&opts.PipelineFlags, &opts.RunFlags, in.Dispatch); err != nil {
					return err
				}
				opts.Yes = true
				if err := opts.RunFlags.validate(opts.Mutations); err != nil {
					return err
				}
				return resumeRun(opts)
			})
		},
		AB: func(ctx context.Context, in mcpserver.ABInput) mcpserver.Outcome {
			return f.callCommand(ctx, "replay", func(c *Factory) error {
				opts := &ResumeOptions{Factory: c, PipelineFlags: locateFlags(in.Locate), ReplicaFlags: replicaFlagDefaults}
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
		},
		Fork: func(ctx context.Context, in mcpserver.ForkInput) mcpserver.Outcome {
			return f.callCommand(ctx, "replay fork", func(c *Factory) error {
				opts := &ForkOptions{Factory: c, PipelineFlags: locateFlags(in.Locate), At: in.At, Substitutions: in.Substitute,
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
		},
	}
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
// factory, and what it printed comes back with its exit code and error line as
// the command line would give them. path names the command in a usage hint.
func (f *Factory) callCommand(ctx context.Context, path string, run func(*Factory) error) mcpserver.Outcome {
	c, out, errOut := f.callFactory(ctx)
	code, msg := exitcode.OK, ""
	if err := run(c); err != nil {
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

// callFactory is a fresh factory for one tool call: streams that are buffers,
// --json on, nobody to prompt, and this factory's environment, working
// directory, clock and global flags. Calls share nothing but those read-only
// values, so they may run concurrently.
func (f *Factory) callFactory(ctx context.Context) (*Factory, *bytes.Buffer, *bytes.Buffer) {
	var out, errOut bytes.Buffer
	ios := &iostreams.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	ios.SetEnv(f.Getenv)
	return &Factory{
		IOStreams: ios,
		Prompter:  func() prompt.Prompter { return nil },
		Getenv:    f.Getenv,
		Getwd:     f.Getwd,
		Environ:   f.Environ,
		NowFlag:   f.NowFlag,
		JSON:      true,
		Quiet:     f.Quiet,
		Verbose:   f.Verbose,
		envMapped: true,
		wallClock: f.wallClock,
		ctx:       ctx,
	}, &out, &errOut
}
