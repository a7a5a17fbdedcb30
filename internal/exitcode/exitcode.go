package exitcode

import (
	"context"
	"errors"
)

// The exit codes of the replay command-line contract (SPEC §3).
const (
	OK       = 0 // done
	Failure  = 1 // any failure not listed below
	Usage    = 2 // bad flags or arguments
	Refused  = 3 // a safety guard refused: branch mismatch, declined confirmation, no TTY and no --yes, another replay running on the project
	NoResume = 4 // nothing to resume: manifest missing, empty or entirely corrupt
	// Interrupted is 128+SIGINT, the shell's code for a command stopped by Ctrl-C.
	Interrupted = 130 // interrupted by the user (Ctrl-C at a prompt, or SIGINT during work)
)

// ErrUsage marks an error as a usage error (exit 2).
var ErrUsage = errors.New("usage error")

// ErrRefused marks an error as a refusal by a safety guard (exit 3).
var ErrRefused = errors.New("refused by a safety guard")

// ErrNothingToResume marks an error as "nothing to resume" (exit 4).
var ErrNothingToResume = errors.New("nothing to resume")

// ErrInterrupted marks an error as an interruption by the user (exit 130).
var ErrInterrupted = errors.New("interrupted")

// Error is an error that carries its own exit code and a message that is shown as is.
type Error struct {
	Code int
	Err  error
}

// Error returns the message of the wrapped error.
func (e *Error) Error() string { return e.Err.Error() }

// Unwrap returns the wrapped error.
func (e *Error) Unwrap() error { return e.Err }

// Of returns the exit code for err: 0 for nil, the code of an *Error, the code of a
// wrapped sentinel (context.Canceled, a cancelled run, counts as an interruption),
// and 1 otherwise.
func Of(err error) int {
	if err == nil {
		return OK
	}
	var coded *Error
	if errors.As(err, &coded) {
		return coded.Code
	}
	switch {
	case errors.Is(err, ErrUsage):
		return Usage
	case errors.Is(err, ErrRefused):
		return Refused
	case errors.Is(err, ErrNothingToResume):
		return NoResume
	case errors.Is(err, ErrInterrupted), errors.Is(err, context.Canceled):
		return Interrupted
	}
	return Failure
}

// Wrap returns an error with message msg that maps to the code of sentinel.
func Wrap(sentinel error, msg string) error {
	return &sentinelError{msg: msg, sentinel: sentinel}
}

type sentinelError struct {
	msg      string
	sentinel error
}

func (e *sentinelError) Error() string { return e.msg }
func (e *sentinelError) Unwrap() error { return e.sentinel }
