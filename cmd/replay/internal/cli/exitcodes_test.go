package cli

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/replaytool/replay/checkpoint"
	"github.com/replaytool/replay/internal/errkind"
	"github.com/replaytool/replay/internal/exitcode"
	"github.com/replaytool/replay/internal/prompt"
	"github.com/replaytool/replay/internal/testkit/testtools"
	"github.com/replaytool/replay/manifest"
	"github.com/replaytool/replay/mutate"
)

func TestExitCodeOfEachDomainKind(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, exitcode.OK},
		{"plain error", errors.New("disk full"), exitcode.Failure},
		{"usage", usageError("--from %q: no such phase", "x"), exitcode.Usage},
		{"bad mutation", errkind.New(mutate.ErrBadMutation, "a.md: no such file"), exitcode.Usage},
		{"checkpoint refusal", &checkpoint.BranchMismatchError{Want: "main", Have: "dev"}, exitcode.Refused},
		{"busy lock", &checkpoint.BusyError{PID: 7, Path: "/x/replay.lock"}, exitcode.Refused},
		{"no manifest", errkind.New(manifest.ErrNoManifest, "x: Manifest not found."), exitcode.NoResume},
		{"prompt interrupted", prompt.ErrInterrupted, exitcode.Interrupted},
		{"cancelled work", fmt.Errorf("re-dispatch of seq 4: %w", context.Canceled), exitcode.Interrupted},
		{"wrapped twice", fmt.Errorf("resume: %w", fmt.Errorf("restore: %w", &checkpoint.UnmergedIndexError{Dir: "p", Path: "a"})), exitcode.Refused},
		{"script error", scriptFail(exitcode.Usage, "dispatch before: bad tier"), exitcode.Usage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, exitCodeOf(tt.err))
		})
	}
}

func TestCobraFlagChecksAreUsageErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		help string
	}{
		{[]string{"--quiet", "--verbose", "version"}, "replay version"},
		{[]string{"manifest", "seq"}, "replay manifest seq"}, // --dir is required
		{[]string{"help", "bogus"}, "replay help"},
	} {
		args := tc.args
		ios, _, _, errOut := testtools.Streams()
		cwd := t.TempDir()
		f := &Factory{IOStreams: ios, Getenv: func(string) string { return "" }, Getwd: func() (string, error) { return cwd, nil }}
		cmd := NewCmdRoot(f)
		cmd.SetArgs(args)
		assert.Equal(t, exitcode.Usage, Execute(f, cmd), "%v", args)
		assert.Contains(t, errOut.String(), "Run '"+tc.help+" --help' for usage.", "%v", args)
	}
}
