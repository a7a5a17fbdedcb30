package cli

import (
	"context"
	"errors"

	"github.com/replaytool/replay/ab"
	"github.com/replaytool/replay/checkpoint"
	"github.com/replaytool/replay/corpus"
	"github.com/replaytool/replay/fork"
	"github.com/replaytool/replay/internal/errkind"
	"github.com/replaytool/replay/internal/exitcode"
	"github.com/replaytool/replay/internal/prompt"
	"github.com/replaytool/replay/manifest"
	"github.com/replaytool/replay/mutate"
	"github.com/replaytool/replay/pipeline"
	"github.com/replaytool/replay/redispatch"
	"github.com/replaytool/replay/replicate"
	"github.com/replaytool/replay/resume"
	"github.com/replaytool/replay/share"
	"github.com/replaytool/replay/store"
	"github.com/replaytool/replay/verify"
)

// errUsage is the kind of the command line's own usage errors: a bad flag, value or
// argument, an unknown command.
var errUsage = errors.New("usage error")

// usageError returns a usage error (exit 2) with a formatted message.
func usageError(format string, args ...any) error {
	return errkind.Errorf(errUsage, format, args...)
}

// exitKinds maps the kinds of error the domain packages declare to exit codes, in
// order: the first kind errors.Is finds decides. This table is the one place where
// an error becomes an exit code.
var exitKinds = []struct {
	kind error
	code int
}{
	{context.Canceled, exitcode.Interrupted},
	{prompt.ErrInterrupted, exitcode.Interrupted},
	{errUsage, exitcode.Usage},
	{mutate.ErrBadMutation, exitcode.Usage},
	{pipeline.ErrBadProfile, exitcode.Usage},
	{resume.ErrBadResumePoint, exitcode.Usage},
	{resume.ErrBadInput, exitcode.Usage},
	{resume.ErrBadSeq, exitcode.Usage},
	{fork.ErrBadFork, exitcode.Usage},
	{ab.ErrBadOptions, exitcode.Usage},
	{replicate.ErrBadOptions, exitcode.Usage},
	{replicate.ErrNoResult, exitcode.Usage},
	{replicate.ErrGateFailed, exitcode.Failure},
	{corpus.ErrBadOptions, exitcode.Usage},
	{corpus.ErrMismatch, exitcode.Refused},
	{corpus.ErrShardMismatch, exitcode.Refused},
	{corpus.ErrIncomplete, exitcode.Failure},
	{corpus.ErrBadShard, exitcode.Failure},
	{checkpoint.ErrRefused, exitcode.Refused},
	{pipeline.ErrForeignShadow, exitcode.Refused},
	{resume.ErrNotConfirmed, exitcode.Refused},
	{redispatch.ErrExternal, exitcode.Refused},
	{manifest.ErrNoManifest, exitcode.NoResume},
	{verify.ErrUnfaithful, exitcode.Unfaithful},
	{store.ErrBadURL, exitcode.Usage},
	{share.ErrDestination, exitcode.Usage},
	{share.ErrOlder, exitcode.Refused},
	{share.ErrBadIndex, exitcode.Failure},
	{share.ErrNoRun, exitcode.Failure},
	{store.ErrUnreachable, exitcode.Failure},
	{store.ErrNotFound, exitcode.Failure},
	{store.ErrCorrupt, exitcode.Failure},
	{store.ErrConflict, exitcode.Failure},
}

// exitCodeOf returns the exit code for err: 0 for nil, the code of a manifest
// command's script-compatible error, the code of the first kind of exitKinds err
// is of, and 1 (failure) otherwise.
func exitCodeOf(err error) int {
	if err == nil {
		return exitcode.OK
	}
	var script *scriptError
	if errors.As(err, &script) {
		return script.code
	}
	for _, k := range exitKinds {
		if errors.Is(err, k.kind) {
			return k.code
		}
	}
	return exitcode.Failure
}
