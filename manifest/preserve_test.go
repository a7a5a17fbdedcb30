package manifest

import (
	"os"
	"path/filepath"
	"testing"

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
	require.NoError(t, os.MkdirAll(scratch, 0o755))
	return live, scratch
}

func TestPreserve(t *testing.T) {
	tests := []struct {
		name string
		all  bool
		want []string
	}{
		{name: "success keeps manifest and ledger", want: []string{ManifestFile, ReceiptLedgerFile}},
		{name: "failed keeps everything", all: true, want: []string{"1-x.md", ManifestFile, ReceiptLedgerFile, "sub/1-x-findings.md"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			live, scratch := liveDir(t)
			require.NoError(t, os.Symlink("/etc/passwd", filepath.Join(live, "2-link.md")))
			res, err := Preserve(live, scratch, tt.all)
			require.NoError(t, err)
			dest := filepath.Join(scratch, "crucible-dispatch-1775430161")
			assert.Equal(t, dest, res.Dest)
			assert.Equal(t, tt.want, res.Copied)
			assert.Equal(t, live, res.Removed)
			assert.NoDirExists(t, live)
			for _, f := range tt.want {
				assert.FileExists(t, filepath.Join(dest, f))
			}
			data, err := os.ReadFile(filepath.Join(dest, ManifestFile))
			require.NoError(t, err)
			assert.Equal(t, okLine, string(data))
			if tt.all {
				assert.Equal(t, []string{"2-link.md (not a regular file)"}, res.Skipped)
			}
		})
	}
}

func TestPreserveRefuses(t *testing.T) {
	t.Run("not a dispatch dir", func(t *testing.T) {
		_, scratch := liveDir(t)
		other := t.TempDir()
		_, err := Preserve(other, scratch, false)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "not a crucible-dispatch-<sid>")
		assert.DirExists(t, other)
	})
	t.Run("no manifest keeps the live dir", func(t *testing.T) {
		live, scratch := liveDir(t)
		require.NoError(t, os.Remove(filepath.Join(live, ManifestFile)))
		_, err := Preserve(live, scratch, false)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "no manifest.jsonl to preserve")
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
	})
}
