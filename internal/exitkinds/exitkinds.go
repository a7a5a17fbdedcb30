// Package exitkinds turns the kinds of error the domain packages declare into
// the exit codes of the command-line contract (internal/exitcode): the one
// table the commands (cmd/replay/internal/cli, which adds its own usage and
// refusal kinds) and the in-process resume of the end-state simulator read
// alike, so a resume run either way ends with the same code. It sits on the
// command layer's floor: it imports the domain packages, and none of them
// imports it.
package exitkinds

import (
	"context"
	"errors"

	"github.com/replaytool/replay/ab"
	"github.com/replaytool/replay/checkpoint"
	"github.com/replaytool/replay/corpus"
	"github.com/replaytool/replay/fork"
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

// Kind is a kind of error (matched with errors.Is) and its exit code.
type Kind struct {
	Err  error
	Code int
}

// kinds maps the domain packages' kinds of error to exit codes, in order: the
// first kind errors.Is finds decides.
var kinds = []Kind{
	{context.Canceled, exitcode.Interrupted},
	{prompt.ErrInterrupted, exitcode.Interrupted},
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

// Of returns the exit code of err: 0 for nil, the code of the first of own
// (the caller's own kinds, looked at first) and then of the table that err is
// of, and 1 (failure) otherwise.
func Of(err error, own ...Kind) int {
	if err == nil {
		return exitcode.OK
	}
	for _, table := range [][]Kind{own, kinds} {
		for _, k := range table {
			if errors.Is(err, k.Err) {
				return k.Code
			}
		}
	}
	return exitcode.Failure
}
