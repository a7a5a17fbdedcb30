package checkpoint

import "errors"

// ErrRefused is the kind of every refusal by a checkpoint safety guard: the branch
// guard, an unmerged index, a tree with unsafe paths, a branch moved since a safety
// checkpoint, another replay holding the project's lock, and a restore that was not
// confirmed. Nothing was changed when an error of this kind is returned.
var ErrRefused = errors.New("refused by a checkpoint safety guard")
