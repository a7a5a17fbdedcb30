package manifest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzSidecarSeqs fuzzes the reader of the torn and corrupt sidecars (issue 38
// item 6): whatever the two files hold, NextSeq never panics or fails, and every
// seq a sidecar line names as a JSON object's "seq" (the line replay moved aside)
// is never handed out again.
func FuzzSidecarSeqs(f *testing.F) {
	f.Add([]byte(`{"seq":7,"file":"7-a.md","status":"dispa`+"\n"), []byte("junk\n"+`{"seq":3}`+"\n"))
	f.Add([]byte(`{"seq": 12}`), []byte{})
	f.Add([]byte(`{"file":"42-build-implementer.md","seq":`), []byte("\x00\xff\n\n"))
	f.Add([]byte(`{"seq":99999999999}`+"\n"), []byte(`{"seq":-4}`+"\r\n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, torn, corrupt []byte) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, TornSidecar), torn, 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, CorruptSidecar), corrupt, 0o644))
		next, err := NextSeq(dir)
		require.NoError(t, err)
		require.GreaterOrEqual(t, next, 1)
		for _, data := range [][]byte{torn, corrupt} {
			for _, line := range bytes.Split(data, []byte("\n")) {
				if n, ok := namedSeq(line); ok {
					require.Greater(t, next, n, "line %q names seq %d", line, n)
				}
			}
		}
	})
}

// namedSeq is the seq of a line that is a JSON object whose "seq" key, spelled
// out, holds a whole number from 0 to SeqLimit: the oracle, by encoding/json.
func namedSeq(line []byte) (int, bool) {
	if !bytes.Contains(line, []byte(`"seq"`)) {
		return 0, false
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(line, &obj) != nil {
		return 0, false
	}
	var n int
	if json.Unmarshal(obj["seq"], &n) != nil || n < 0 || n > SeqLimit {
		return 0, false
	}
	return n, true
}
