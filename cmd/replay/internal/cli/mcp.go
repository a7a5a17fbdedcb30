package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/replaytool/replay/cmd/replay/internal/mcpserver"
	"github.com/replaytool/replay/internal/exitcode"
	"github.com/replaytool/replay/internal/paths"
)

// MCPOptions are the flags of `replay mcp`.
type MCPOptions struct {
	cmdBase
	// Environ is the environment the tools' command agents inherit (nil: the
	// process's).
	Environ    func() []string
	AllowWrite bool
	// AllowExec lets a tool call choose any agent and check command (it widens
	// AllowWrite, which it needs).
	AllowExec bool
	// Agents and Checks are the commands a tool call may choose without AllowExec.
	Agents, Checks []string
	// Roots are directories the tools' paths may name besides the project and
	// its runs.
	Roots []string
}

// NewCmdMCP builds `replay mcp`, the Model Context Protocol server over stdio.
func NewCmdMCP(f *Factory, runF func(*MCPOptions) error) *cobra.Command {
	opts := &MCPOptions{cmdBase: baseOf(f), Environ: f.Environ}
	cmd := &cobra.Command{
		Use:   "mcp [--allow-write [--agent CMD]... [--check CMD]... [--allow-exec]] [--root DIR]...",
		Short: "Serve replay's commands as Model Context Protocol tools over stdio",
		Long: `Run a Model Context Protocol server on stdin and stdout, so a coding agent can
call replay itself. Each tool runs the command of the same name with --json, in
this process, and returns the document that command prints as structured content:
status, plan, state, diff, checkpoint_list, checkpoint_show and verify, which
change nothing on disk. With --allow-write the server also offers resume (only with
confirm: true, behind the same branch guard as 'replay --yes'), ab (an A/B replay
with mutations) and fork; without it they are not listed at all.

What a caller may reach is set here, never by a tool call:
  - Paths in tool arguments (path, repo, scratch, shadow, profile, templates, the
    FILE of overlay, mutate and substitute) must lie inside the project (the
    directory the server starts in), its run area $HOME/.claude/projects/<H>/,
    a crucible-dispatch-* directory of $TMPDIR or /tmp, or a --root DIR;
    symbolic links are followed before the check. The html output of ab must lie
    inside the run's directory.
  - --allow-write lets the write tools write inside the project and its runs.
    Their agent is a built-in one (builtin:sim, recorded) or one given here
    with --agent CMD (the first is the default of ab); a replicas check is one
    given with --check CMD. Any other command from a caller is refused (exit 3).
  - --allow-exec (with --allow-write) lets a caller run any agent or check command.

The global flags given to 'replay mcp' (--now, --quiet, --verbose) apply to every
tool call; relative paths in tool arguments are from the directory the server was
started in. A failed command is a tool error with the command's one-line message;
the server goes on. Nothing but the protocol is written to stdout; the server's
log goes to stderr. It stops when stdin closes.

Register it with Claude Code:
  claude mcp add replay -- replay mcp
` + exitStatusFor("mcp"),
		Example: `  replay mcp
  replay mcp --allow-write
  claude mcp add replay -- replay mcp --now 2026-04-07T18:00:00Z`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCommand(cmd, &opts.Global, opts, runF, mcpRun)
		},
	}
	cmd.Flags().BoolVar(&opts.AllowWrite, "allow-write", false, "also offer the tools that write: resume (with confirm: true), ab and fork")
	cmd.Flags().BoolVar(&opts.AllowExec, "allow-exec", false, "let a tool call run any agent or check command it names (needs --allow-write)")
	cmd.Flags().StringArrayVar(&opts.Agents, "agent", nil, "an agent `CMD` the write tools may run (repeatable; the first is ab's default)")
	cmd.Flags().StringArrayVar(&opts.Checks, "check", nil, "a replicas check `CMD` the ab tool may run (repeatable)")
	cmd.Flags().StringArrayVar(&opts.Roots, "root", nil, "also let tool paths name files inside `DIR` (repeatable)")
	return cmd
}

func mcpRun(opts *MCPOptions) error {
	f := opts.env()
	if _, err := f.Now(); err != nil {
		return err
	}
	if opts.AllowExec && !opts.AllowWrite {
		return usageError("--allow-exec widens --allow-write: give both, or neither")
	}
	server, err := NewMCPServer(opts)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	f.Verbosef("replay mcp: serving on stdio (write tools: %t)", opts.AllowWrite)
	err = server.Run(ctx, mcpserver.Drain(mcpserver.Lines(f.IO.In, f.IO.Out)))
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) || errors.Is(err, mcp.ErrConnectionClosed) {
		return nil
	}
	return fmt.Errorf("mcp: stdin: %w; replay mcp reads newline-delimited JSON-RPC messages from an MCP client (see 'replay mcp --help' to register it)", err)
}

// NewMCPServer returns the server `replay mcp` serves with opts' capabilities
// and global flags (opts.Global): its tools run on opts' dependencies
// (environment, working directory, clock), confined by mcpPolicy; its log goes
// to opts.IO's stderr.
func NewMCPServer(opts *MCPOptions) (*mcp.Server, error) {
	level := slog.LevelWarn
	if opts.Global.Verbose {
		level = slog.LevelInfo
	}
	pol, err := mcpPolicy(opts.env(), opts)
	if err != nil {
		return nil, err
	}
	return mcpserver.New(mcpserver.Options{
		AllowWrite: opts.AllowWrite,
		Policy:     pol,
		Version:    Version,
		Commands:   opts.mcpCommands(),
		Run:        opts.toolRunner(),
		Logger:     slog.New(slog.NewTextHandler(opts.IO.ErrOut, &slog.HandlerOptions{Level: level, ReplaceAttr: dropTime})),
	}), nil
}

// mcpPolicy is what the tool calls may reach: paths inside the project (the
// working directory), its run area, the run directories of $TMPDIR and the
// system temporary root, and opts.Roots; the agents and checks of opts.
func mcpPolicy(f *runEnv, opts *MCPOptions) (*mcpserver.Policy, error) {
	cwd, err := f.Getwd()
	if err != nil {
		return nil, err
	}
	roots := []string{cwd}
	if home := f.Getenv("HOME"); home != "" {
		roots = append(roots, paths.ProjectRoot(home, cwd))
	}
	for _, r := range opts.Roots {
		if !filepath.IsAbs(r) {
			r = filepath.Join(cwd, r)
		}
		if st, err := os.Stat(r); err != nil || !st.IsDir() {
			return nil, usageError("--root %s: not a directory; give an existing directory", r)
		}
		roots = append(roots, r)
	}
	return &mcpserver.Policy{Cwd: cwd, Roots: roots, TmpDirs: []string{tmpDir(f), sysTmpDir(f)}, RunDirPrefix: "crucible-dispatch-",
		AllowExec: opts.AllowExec, Agents: opts.Agents, Checks: opts.Checks}, nil
}

// dropTime leaves the wall-clock time out of the server's log lines: every time
// replay prints comes from the injected clock.
func dropTime(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}

// toolRunner runs a tool's command line the way the CLI runs it, for a tool
// mcpCommands has no entry for: a fresh root command on a call factory
// (callFactory).
func (o *MCPOptions) toolRunner() mcpserver.Runner {
	return func(ctx context.Context, args []string) mcpserver.Outcome {
		call, out, errOut := o.callFactory(ctx)
		globals := []string{"--json"}
		if o.Global.Now != "" {
			globals = append(globals, "--now="+o.Global.Now)
		}
		if o.Global.Quiet {
			globals = append(globals, "--quiet")
		}
		if o.Global.Verbose {
			globals = append(globals, "--verbose")
		}
		cmd := NewCmdRoot(call)
		cmd.SetArgs(append(globals, args...))
		cmd.SetContext(ctx)
		code, msg := execute(call, cmd)
		return mcpserver.Outcome{Stdout: out.Bytes(), Stderr: errOut.String(), Code: code, Kind: exitcode.Name(code), Err: msg}
	}
}
