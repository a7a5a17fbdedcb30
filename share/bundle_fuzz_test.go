package share_test

import (
	"bufio"
	"bytes"
	"strings"
	"testing"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"

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

// FuzzUnbundle: any bytes unbundled into a repository on disk give refs whose
// objects are all there, or an error; never a panic, and never an inflation
// past the bounds (the scan refuses first). Seeds: the bombs of
// bomb_test.go, a real bundle of a few objects, and testdata/fuzz/FuzzUnbundle.
func FuzzUnbundle(f *testing.F) {
	for _, data := range bombBundles() {
		f.Add(data)
	}
	a, ah := blobEntry([]byte("hello\n"))
	f.Add(makeBundle(ah, a))
	base, bh := blobEntry(bytes.Repeat([]byte("replay "), (64<<10)/7+1)[:64<<10])
	f.Add(makeBundle(bh, base, deltaBomb(bh, 128<<10)))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		st := filesystem.NewStorage(osfs.New(dir), cache.NewObjectLRUDefault())
		refs, err := share.Unbundle(st, bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		for _, r := range refs {
			if _, err := st.EncodedObject(plumbing.AnyObject, r.Hash); err != nil {
				t.Fatalf("ref %s: object %s missing after a successful unbundle", r.Name, r.Hash)
			}
		}
	})
}
