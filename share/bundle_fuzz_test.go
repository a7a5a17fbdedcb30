package share_test

import (
	"bufio"
	"bytes"
	"strings"
	"testing"

	"github.com/replaytool/replay/share"
)

// FuzzReadBundleHeader: any bytes give refs with valid names or an error,
// never a panic, and never a ref outside refs/ (or HEAD).
func FuzzReadBundleHeader(f *testing.F) {
	f.Add([]byte("# v2 git bundle\n0123456789abcdef0123456789abcdef01234567 refs/heads/main\n\nPACK"))
	f.Add([]byte("# v3 git bundle\n@object-format=sha1\n0123456789abcdef0123456789abcdef01234567 HEAD\n\n"))
	f.Add([]byte("# v2 git bundle\n-0123456789abcdef0123456789abcdef01234567 x\n\n"))
	f.Add([]byte("# v2 git bundle\n0123456789abcdef0123456789abcdef01234567 refs/../../config\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		refs, err := share.ReadBundleHeader(bufio.NewReader(bytes.NewReader(data)))
		if err != nil {
			return
		}
		for _, r := range refs {
			if r.Name != "HEAD" && (!strings.HasPrefix(r.Name, "refs/") || strings.Contains(r.Name, "..")) {
				t.Fatalf("accepted ref %q", r.Name)
			}
		}
	})
}
