package cli

import (
	"errors"

	"github.com/replaytool/replay/internal/errkind"
	"github.com/replaytool/replay/internal/exitcode"
	"github.com/replaytool/replay/internal/exitkinds"
)

// errUsage is the kind of the command line's own usage errors: a bad flag, value or
// argument, an unknown command.
var errUsage = errors.New("usage error")

// usageError returns a usage error (exit 2) with a formatted message.
func usageError(format string, args ...any) error {
	return errkind.Errorf(errUsage, format, args...)
}

// ownKinds are the command line's own kinds of error, looked at before the
// domain packages' (internal/exitkinds holds the one table of those).
var ownKinds = []exitkinds.Kind{
	{Err: errUsage, Code: exitcode.Usage},
	{Err: errSkillEdited, Code: exitcode.Refused},
}

// exitCodeOf returns the exit code for err: 0 for nil, the code of a manifest
// command's script-compatible error, the code of the first kind of ownKinds, then of
// internal/exitkinds, err is of, and 1 (failure) otherwise.
func exitCodeOf(err error) int {
	if err == nil {
		return exitcode.OK
	}
	var script *scriptError
	if errors.As(err, &script) {
		return script.code
	}
	return exitkinds.Of(err, ownKinds...)
}
