// Package exitcode lists the exit codes of the replay command-line contract (SPEC §3)
// in one file, with their names. Only the command layer turns errors into these codes (internal/exitkinds holds the table,
// cmd/replay/internal/cli adds its own kinds); domain packages declare kinds of error and never import this package.
package exitcode

// The exit codes of the replay command-line contract.
const (
	OK       = 0 // done
	Failure  = 1 // any failure not listed below
	Usage    = 2 // bad flags or arguments
	Refused  = 3 // a safety guard refused: branch mismatch, declined confirmation, no TTY and no --yes, another replay running on the project
	NoResume = 4 // nothing to resume: manifest missing, empty or entirely corrupt
	// Unfaithful is replay verify --strict finding a recording that is not valid.
	Unfaithful = 5 // a recording is stale, absent or corrupt (replay verify --strict)
	// Interrupted is 128+SIGINT, the shell's code for a command stopped by Ctrl-C.
	Interrupted = 130 // interrupted by the user (Ctrl-C at a prompt, or SIGINT during work)
)

// Name is the name of an exit code as the MCP server's tool errors give it (ok,
// failure, usage, refused, no-resume, unfaithful, interrupted); an unknown code is
// a failure.
func Name(code int) string {
	switch code {
	case OK:
		return "ok"
	case Usage:
		return "usage"
	case Refused:
		return "refused"
	case NoResume:
		return "no-resume"
	case Unfaithful:
		return "unfaithful"
	case Interrupted:
		return "interrupted"
	}
	return "failure"
}
