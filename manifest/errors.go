package manifest

import "errors"

// ErrNoManifest is the kind of every error that means there is no run to read: no
// manifest where PATH points, or one that is empty or entirely corrupt. Errors of
// this kind say which file and what to pass instead.
var ErrNoManifest = errors.New("manifest not found, empty or entirely corrupt")
