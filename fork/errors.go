package fork

import "errors"

// ErrBadFork is the kind of the error for a fork, lineage or run name the user got
// wrong: a seq outside the run or the child, a missing substitution file, an
// unknown run. Nothing is written when it is returned.
var ErrBadFork = errors.New("bad fork request")
