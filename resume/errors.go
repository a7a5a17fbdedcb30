package resume

import "errors"

// ErrBadResumePoint is the kind of the error for a --from-seq or --from-phase that
// names no dispatch or phase of the run, or a point later than the detected one.
var ErrBadResumePoint = errors.New("bad resume point")

// ErrBadInput is the kind of a preflight failure the user fixes on the command line:
// a --templates folder or a --template-ref that cannot be read.
var ErrBadInput = errors.New("bad command-line input")

// ErrNotConfirmed is the kind of the refusal to go on without a confirmation: the
// user declined, or no one could be asked and --yes was not given. Nothing was
// changed when it is returned.
var ErrNotConfirmed = errors.New("not confirmed")

// ErrBadSeq is the kind of a seq given on the command line (--at, a substitution's
// seq) that lies outside the run; the message names the valid range.
var ErrBadSeq = errors.New("seq outside the run")
