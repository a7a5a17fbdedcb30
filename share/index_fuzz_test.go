package share_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/replaytool/replay/share"
)

// FuzzParseIndex: any bytes give an index that passes the checks or an
// ErrBadIndex, never a panic; an accepted index keeps every path inside the
// run's folders and re-encodes to an index that parses to the same files.
func FuzzParseIndex(f *testing.F) {
	f.Add([]byte(`{"format":2,"run":"1775430161-0123456789ab","session":"1775430161","project":"0123456789abcdef","project_id":"git:0123456789abcdef0123456789abcdef01234567","manifest":"memory/d/manifest.jsonl","files":[{"path":"memory/d/manifest.jsonl","mode":"0644","size":1,"sha256":"2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"},{"path_b64":"bWVtb3J5L/8=","mode":"0755","size":9000000,"sha256":"2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881","chunks":["2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881","2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"]}],"checkpoints":{"head":"refs/heads/main","refs":[{"name":"refs/heads/main","hash":"0123456789abcdef0123456789abcdef01234567"}],"bundles":[{"size":3,"sha256":"2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"}]}}`))
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
			if share.CheckPath(file.Path) != nil || slices.Contains(strings.Split(file.Path, "/"), "..") || strings.HasPrefix(file.Path, "/") {
				t.Fatalf("accepted a bad path %q", file.Path)
			}
		}
		again, err := share.ParseIndex(ix.Marshal(), "again")
		if err != nil || len(again.Files) != len(ix.Files) || !bytes.Equal(again.Marshal(), ix.Marshal()) {
			t.Fatalf("re-encoded index does not parse: %v", err)
		}
	})
}
