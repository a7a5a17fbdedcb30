package share

import "errors"

// Error kinds of sharing. The command layer maps them to exit codes; the
// store's own kinds (unreachable, not found, corrupt) pass through.
var (
	// ErrBadIndex: a run's index in the store is malformed or names a file
	// outside the run's folders.
	ErrBadIndex = errors.New("bad run index")
	// ErrDestination: pull's destination exists and is not empty, or cannot
	// be written.
	ErrDestination = errors.New("bad pull destination")
	// ErrNoRun: there is no run to push at PATH, or the store has no run by
	// that id (or several, and none was named).
	ErrNoRun = errors.New("no such run")
	// ErrOlder: the store's copy of the run holds what the pushed copy lacks
	// (manifest lines, files, checkpoints); --force replaces it.
	ErrOlder = errors.New("the store holds a newer copy of the run")
)
