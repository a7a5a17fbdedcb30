package mcpserver

import (
	"context"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Runner runs one replay command line (args below the program name, with "--"
// before the positional arguments) and returns what it printed. The runner adds
// the global flags of the server (--json always, --now and the others as the
// server was started with). It must be safe to call concurrently.
type Runner func(ctx context.Context, args []string) Outcome

// Outcome is what one run of a replay command produced.
type Outcome struct {
	// Stdout is everything the command printed on stdout: with --json, its one
	// JSON document.
	Stdout []byte
	// Stderr is what it printed on stderr (warnings, the error line).
	Stderr string
	// Code is the exit code, Kind its name (ok, failure, usage, refused,
	// no-resume, unfaithful, interrupted).
	Code int
	Kind string
	// Err is the one-line error message as the CLI prints it after "replay: ",
	// empty on success.
	Err string
}

// Commands are the command layer's own entries for the tools: each runs the
// command of its tool from the tool's checked input, in process, the way the
// command line runs it (the same options, the same run function), and returns what
// it printed with --json. A nil entry runs the tool's command line through the
// Runner instead.
type Commands struct {
	Status         func(context.Context, StatusInput) Outcome
	Plan           func(context.Context, PlanInput) Outcome
	State          func(context.Context, StateInput) Outcome
	Diff           func(context.Context, DiffInput) Outcome
	CheckpointList func(context.Context, CheckpointListInput) Outcome
	CheckpointShow func(context.Context, CheckpointShowInput) Outcome
	Verify         func(context.Context, VerifyInput) Outcome
	Resume         func(context.Context, ResumeInput) Outcome
	AB             func(context.Context, ABInput) Outcome
	Fork           func(context.Context, ForkInput) Outcome
}

// Options configure a server.
type Options struct {
	// AllowWrite adds the tools that change a project: resume, ab and fork.
	AllowWrite bool
	// Policy confines the tools' paths and commands; nil confines nothing (tests
	// of the tools alone).
	Policy *Policy
	// Version is the server's version in the initialize handshake.
	Version string
	// Commands run the tools in process; Run runs the command lines of the tools
	// Commands leaves out.
	Commands Commands
	Run      Runner
	// Logger receives the server's own log (nil: none); never stdout.
	Logger *slog.Logger
}

// New returns a server with the read-only tools, and the write tools when
// opts.AllowWrite is set.
func New(opts Options) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "replay", Title: "replay", Version: opts.Version}, &mcp.ServerOptions{
		Instructions: Instructions(opts.AllowWrite),
		Logger:       opts.Logger,
		Capabilities: &mcp.ServerCapabilities{},
	})
	s.AddReceivingMiddleware(limits(opts.AllowWrite))
	addReadTools(s, opts.Run, opts.Commands, opts.Policy)
	if opts.AllowWrite {
		addWriteTools(s, opts.Run, opts.Commands, opts.Policy)
	}
	return s
}

// Instructions is the text the server gives a client on connecting: what the
// tools are and whether the write tools are there.
func Instructions(allowWrite bool) string {
	s := `replay resumes crashed multi-agent Crucible build pipelines and replays them with
prompt-template mutations. Every tool runs the replay command of the same name with
--json and returns the JSON document that command prints as structured content,
plus a one-line summary. A failed command is a tool error carrying the command's
one-line message; its exit code and kind are in the structured content.

Read-only tools (they change nothing on disk): status, plan (explain: true shows
why it resumes there), state (the run as of a seq), diff, checkpoint_list,
checkpoint_show, verify.
`
	if allowWrite {
		return s + `
Write tools (this server was started with --allow-write):
- resume restores the working tree from the resume point's checkpoint and hands
  off or re-dispatches. It needs confirm: true, and refuses when the project is on
  another branch than the pipeline ran on. Call plan first to see what it does.
- ab replays the run with template mutations in an isolated worktree.
- fork makes a child run at a seq, in its own directory.
`
	}
	return s + `
Write tools (resume, ab, fork) are NOT available: this server was started without
--allow-write. To allow them, start it as 'replay mcp --allow-write'.
`
}
