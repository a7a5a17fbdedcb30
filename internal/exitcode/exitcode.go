// Package exitcode lists the exit codes of the replay command-line contract (SPEC §3)
// in one file. Only the command layer (cmd/replay/internal/cli) turns errors into these codes (its exitKinds
// table); domain packages declare kinds of error and never import this package.
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
