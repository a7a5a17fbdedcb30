package ab

import "errors"

// ErrBadOptions is the kind of the error for an A/B replay asked for without what it
// needs: no agent, or a --template-ref without --templates or naming no commit.
var ErrBadOptions = errors.New("bad A/B replay options")
