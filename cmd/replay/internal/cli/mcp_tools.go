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
	if d.AgentTimeout != "" {
		t, err := time.ParseDuration(d.AgentTimeout)
		if err != nil {
			return usageError("agent_timeout %q is not a duration; give one such as 30m (0: no limit)", d.AgentTimeout)
		}
		rf.AgentTimeout = t
	}
	return nil
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
