// Package mcpserver exposes replay's commands as the tools of a Model Context
// Protocol server (github.com/modelcontextprotocol/go-sdk).
//
// It holds no command logic: every tool decodes its typed input under the tool's
// JSON Schema, checks it against the Policy, and hands it to the command layer's
// entry for the tool (Commands), which calls the very run function the CLI calls
// and returns what it printed; a tool without an entry runs its command line
// through a Runner. Exit codes and their names come from internal/exitcode, the
// one table. The read-only tools are always there; resume, ab and fork only when
// the server is started with write access, and resume only with confirm: true.
//
// It must not import the command layer (cmd/replay/internal/cli imports it and
// gives it Commands and the Runner), cobra or huh, and it writes nothing to
// os.Stdout: the transport and the logger are given.
package mcpserver
