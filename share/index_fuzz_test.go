package share_test

import (
	"strings"
	"testing"

	"github.com/replaytool/replay/share"
)

// FuzzParseIndex: any bytes give an index that passes the checks or an
// ErrBadIndex, never a panic; an accepted index keeps every path inside the
// run's folders and re-encodes to an index that parses to the same files.
func FuzzParseIndex(f *testing.F) {
	f.Add([]byte(`{"format":1,"run":"1775430161-0123456789ab","session":"1775430161","project":"0123456789abcdef","manifest":"memory/d/manifest.jsonl","files":[{"path":"memory/d/manifest.jsonl","mode":"0644","size":1,"sha256":"2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"}],"checkpoints":null}`))
	f.Add([]byte(`{"format":1,"files":[{"path":"../x"}]}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ix, err := share.ParseIndex(data, "fuzz")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz: ") {
				t.Fatalf("error does not name where: %v", err)
			}
			return
		}
		for _, file := range ix.Files {
			if share.CheckPath(file.Path) != nil || strings.Contains(file.Path, "..") || strings.HasPrefix(file.Path, "/") {
				t.Fatalf("accepted a bad path %q", file.Path)
			}
		}
		again, err := share.ParseIndex(ix.Marshal(), "again")
		if err != nil || len(again.Files) != len(ix.Files) {
			t.Fatalf("re-encoded index does not parse: %v", err)
		}
	})
}
