package manifest

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func liveDir(t *testing.T) (live, scratch string) {
	t.Helper()
	root := t.TempDir()
	live = filepath.Join(root, "tmp", "crucible-dispatch-1775430161")
	scratch = filepath.Join(root, "scratch")
	writeFile(t, live, ManifestFile, okLine)
	writeFile(t, live, ReceiptLedgerFile, `{"dispatch_id":"1-x"}`+"\n")
	writeFile(t, live, "1-x.md", "# Dispatch: x\n---\n")
	writeFile(t, live, "sub/1-x-findings.md", "f")
	old := time.Date(2026, 4, 7, 14, 52, 10, 123456789, time.UTC)
	for _, p := range []string{ManifestFile, ReceiptLedgerFile, "1-x.md", "sub/1-x-findings.md", "sub", "."} {
		require.NoError(t, os.Chtimes(filepath.Join(live, p), old, old))
	}
	require.NoError(t, os.MkdirAll(scratch, 0o755))
	return live, scratch
}

func TestPreserve(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		failed bool
		want   []string
	}{
		{name: "success copies everything, removes the live dir", want: []string{"1-x.md", ManifestFile, ReceiptLedgerFile, "sub/1-x-findings.md"}},
		{name: "failed copies everything and keeps the live dir", failed: true, want: []string{"1-x.md", ManifestFile, ReceiptLedgerFile, "sub/1-x-findings.md"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			live, scratch := liveDir(t)
			secret := writeFile(t, t.TempDir(), "secret", "do not copy")
			require.NoError(t, os.Symlink(secret, filepath.Join(live, "2-link.md")))
			liveInfo, err := os.Stat(live)
			require.NoError(t, err)
			res, err := Preserve(live, scratch, tt.failed)
			require.NoError(t, err)
			dest := filepath.Join(scratch, "crucible-dispatch-1775430161")
			assert.Equal(t, dest, res.Dest)
			assert.Equal(t, tt.want, res.Copied)
			assert.Equal(t, !tt.failed, res.Removed)
			assert.Equal(t, []string{"2-link.md (not a regular file)"}, res.Skipped)
			assert.NoFileExists(t, filepath.Join(dest, "2-link.md"))
			destInfo, err := os.Stat(dest)
			require.NoError(t, err)
			assert.Equal(t, liveInfo.Mode(), destInfo.Mode())
			assert.Equal(t, liveInfo.ModTime(), destInfo.ModTime(), "directory times kept")
			if tt.failed {
				assert.DirExists(t, live)
				assertSameTimes(t, filepath.Join(live, "sub"), filepath.Join(dest, "sub"))
			} else {
				assert.NoDirExists(t, live)
			}
			for _, f := range tt.want {
				assert.FileExists(t, filepath.Join(dest, f))
				st, err := os.Stat(filepath.Join(dest, f))
				require.NoError(t, err)
				assert.Equal(t, time.Date(2026, 4, 7, 14, 52, 10, 123456789, time.UTC), st.ModTime().UTC(), f)
			}
			data, err := os.ReadFile(filepath.Join(dest, ManifestFile))
			require.NoError(t, err)
			assert.Equal(t, okLine, string(data))
		})
	}
}

func assertSameTimes(t *testing.T, a, b string) {
	t.Helper()
	sa, err := os.Stat(a)
	require.NoError(t, err)
	sb, err := os.Stat(b)
	require.NoError(t, err)
	assert.Equal(t, sa.ModTime(), sb.ModTime(), b)
	assert.Equal(t, sa.Mode(), sb.Mode(), b)
}

func TestPreserveAnyNameTrailingSlashAndSecondCall(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	live := filepath.Join(root, "my run")
	writeFile(t, live, ManifestFile, okLine)
	writeFile(t, live, ReceiptLedgerFile, "{}\n")
	scratch := filepath.Join(root, "scratch") + "/"
	res, err := Preserve(live+"/", scratch, false)
	require.NoError(t, err)
	assert.Equal(t, scratch+"my run", res.Dest, "joined like the script, not cleaned")
	assert.FileExists(t, filepath.Join(scratch, "my run", ReceiptLedgerFile))
	assert.NoDirExists(t, live)

	_, err = Preserve(live, scratch, false)
	require.ErrorIs(t, err, ErrNoDispatchDir, "a second call changes nothing")
	assert.FileExists(t, filepath.Join(scratch, "my run", ManifestFile))
}

func TestPreserveRefuses(t *testing.T) {
	t.Parallel()
	t.Run("no receipt ledger keeps the live dir", func(t *testing.T) {
		live, scratch := liveDir(t)
		require.NoError(t, os.Remove(filepath.Join(live, ReceiptLedgerFile)))
		_, err := Preserve(live, scratch, false)
		require.ErrorIs(t, err, ErrNoLedger)
		assert.DirExists(t, live)
		assert.NoDirExists(t, filepath.Join(scratch, filepath.Base(live)))
	})
	t.Run("no manifest keeps the live dir", func(t *testing.T) {
		live, scratch := liveDir(t)
		require.NoError(t, os.Remove(filepath.Join(live, ManifestFile)))
		_, err := Preserve(live, scratch, false)
		require.ErrorIs(t, err, ErrNoLedger)
		assert.DirExists(t, live)
	})
	t.Run("failed needs neither", func(t *testing.T) {
		live, scratch := liveDir(t)
		require.NoError(t, os.Remove(filepath.Join(live, ReceiptLedgerFile)))
		_, err := Preserve(live, scratch, true)
		require.NoError(t, err)
		assert.DirExists(t, live)
	})
	t.Run("already the durable copy", func(t *testing.T) {
		live, _ := liveDir(t)
		_, err := Preserve(live, filepath.Dir(live), false)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "already the durable copy")
		assert.DirExists(t, live)
	})
	t.Run("scratch inside the live dir", func(t *testing.T) {
		live, _ := liveDir(t)
		_, err := Preserve(live, filepath.Join(live, "sub"), false)
		require.Error(t, err)
		assert.DirExists(t, live)
		assert.NoDirExists(t, filepath.Join(live, "sub", filepath.Base(live)))
	})
}

// TestPreserveSymlinkGuard plants symlinks where the durable copy goes: each is
// refused with a clear error before anything is written, the live dir is kept and
// the symlink's target is untouched. The same layouts without the symlink work.
func TestPreserveSymlinkGuard(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		failed bool
		plant  func(t *testing.T, dest, target string)
	}{
		{name: "destination dir is a symlink", plant: func(t *testing.T, dest, target string) {
			require.NoError(t, os.Symlink(target, dest))
		}},
		{name: "destination manifest is a symlink", plant: func(t *testing.T, dest, target string) {
			require.NoError(t, os.MkdirAll(dest, 0o755))
			require.NoError(t, os.Symlink(filepath.Join(target, "victim"), filepath.Join(dest, ManifestFile)))
		}},
		{name: "destination subdir is a symlink (failed)", failed: true, plant: func(t *testing.T, dest, target string) {
			require.NoError(t, os.MkdirAll(dest, 0o755))
			require.NoError(t, os.Symlink(target, filepath.Join(dest, "sub")))
		}},
	}
	for _, tt := range tests {
		for _, planted := range []bool{true, false} {
			name := tt.name
			if !planted {
				name += " (not planted: works)"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				live, scratch := liveDir(t)
				target := t.TempDir()
				victim := writeFile(t, target, "victim", "precious\n")
				dest := filepath.Join(scratch, filepath.Base(live))
				if planted {
					tt.plant(t, dest, target)
				}
				_, err := Preserve(live, scratch, tt.failed)
				if !planted {
					require.NoError(t, err)
					assert.FileExists(t, filepath.Join(dest, ManifestFile))
					return
				}
				require.Error(t, err)
				assert.Contains(t, err.Error(), "symlink")
				assert.DirExists(t, live, "the live dir is kept")
				entries, err := os.ReadDir(target)
				require.NoError(t, err)
				assert.Len(t, entries, 1, "nothing written through the symlink")
				data, err := os.ReadFile(victim)
				require.NoError(t, err)
				assert.Equal(t, "precious\n", string(data))
			})
		}
	}
}

func TestPreserveMissingDir(t *testing.T) {
	t.Parallel()
	_, err := Preserve(filepath.Join(t.TempDir(), "gone"), t.TempDir(), true)
	require.True(t, errors.Is(err, ErrNoDispatchDir))
}
