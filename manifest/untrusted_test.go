package manifest

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/runfile"
	"github.com/replaytool/replay/internal/testkit/testtools"
)

// scratchWithManifest makes <scratch>/crucible-dispatch-1775430161/manifest.jsonl
// and returns the scratch dir and the manifest path.
func scratchWithManifest(t *testing.T) (string, string) {
	t.Helper()
	scratch := t.TempDir()
	dd := filepath.Join(scratch, "crucible-dispatch-1775430161")
	require.NoError(t, os.MkdirAll(dd, 0o755))
	mp := filepath.Join(dd, ManifestFile)
	require.NoError(t, os.WriteFile(mp, []byte(`{"seq":1,"status":"completed"}`+"\n"), 0o644))
	return scratch, mp
}

func TestAMarkerThatCannotBeReadIsAnErrorNeverSkipped(t *testing.T) {
	t.Parallel()
	for name, plant := range map[string]func(string) error{
		"FIFO":      func(p string) error { return testtools.Mkfifo(p, 0o644) },
		"/dev/zero": func(p string) error { return os.Symlink("/dev/zero", p) },
		"directory": func(p string) error { return os.Mkdir(p, 0o755) },
		"too large": func(p string) error { return os.WriteFile(p, make([]byte, 65<<10), 0o644) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			scratch, mp := scratchWithManifest(t)
			marker := filepath.Join(scratch, MarkerFile)
			require.NoError(t, plant(marker))
			for _, arg := range []string{scratch, mp, filepath.Dir(mp)} {
				loc, err := Resolve(arg, ResolveOptions{Cwd: scratch})
				require.Error(t, err, "%s: the marker beside it must be read, not skipped", arg)
				assert.Nil(t, loc)
				assert.Contains(t, err.Error(), marker)
				assert.True(t, errorIsReadRefusal(err), "%v", err)
			}
		})
	}
}

func errorIsReadRefusal(err error) bool {
	return isAny(err, runfile.ErrNotRegular, runfile.ErrTooLarge)
}

func TestRunFilesThatAreNotRegularFilesAreRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, ManifestFile)
	require.NoError(t, testtools.Mkfifo(fifo, 0o644))
	_, err := Read(fifo)
	require.ErrorIs(t, err, runfile.ErrNotRegular)
	assert.Contains(t, err.Error(), "manifest is a FIFO")
	_, err = NextSeq(dir)
	assert.ErrorIs(t, err, runfile.ErrNotRegular)
	_, err = FindLast(fifo, func(*Entry) bool { return true })
	assert.ErrorIs(t, err, runfile.ErrNotRegular)

	ledger := filepath.Join(dir, ReceiptLedgerFile)
	require.NoError(t, os.Symlink("/dev/zero", ledger))
	_, _, err = ReadReceipts(ledger)
	assert.ErrorIs(t, err, runfile.ErrNotRegular)

	// A FIFO numbered file is not a dispatch file: it is passed over, never waited on.
	require.NoError(t, testtools.Mkfifo(filepath.Join(dir, "3-build-implementer.md"), 0o644))
	files, err := ReadDispatchDir(dir)
	require.NoError(t, err)
	assert.Empty(t, files)
}

func isAny(err error, targets ...error) bool {
	for _, t := range targets {
		if errors.Is(err, t) {
			return true
		}
	}
	return false
}
