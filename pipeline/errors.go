package pipeline

import "errors"

// ErrBadProfile is the kind of the error for a --profile file that cannot be used.
var ErrBadProfile = errors.New("bad --profile file")

// ErrForeignShadow is the kind of the refusal of a shadow repository that belongs to
// another project directory than the one replay was asked to restore into; nothing
// was changed when it is returned.
var ErrForeignShadow = errors.New("shadow repository of another project")
