// Package mcpserver exposes replay's commands as the tools of a Model Context
// Protocol server (github.com/modelcontextprotocol/go-sdk).
//
// It holds no command logic: every tool maps its typed input to a replay command
// line and hands it to a Runner, which runs the very command code the CLI runs and
// returns what it printed. The read-only tools are always there; resume, ab and
// fork only when the server is started with write access, and resume only with
// confirm: true.
//
// It must not import the command layer (cmd/replay/internal/cli imports it and
// gives it the Runner), internal/exitcode, cobra or huh, and it writes nothing to
// os.Stdout: the transport and the logger are given.
package mcpserver
