package share

import (
	"bufio"
	"io"

	"github.com/go-git/go-git/v5/storage"
)

// What the tests of package share_test use beyond the package's API.

// WriteBundle writes a complete git bundle (v2: the header, one line per ref,
// a blank line, then a packfile of every object the refs reach) of the refs
// under refs/ in st, and returns the refs it holds. No refs: no bundle, (nil, nil).
func WriteBundle(w io.Writer, st storage.Storer) ([]BundleRef, error) {
	refs, err := shadowRefs(st)
	if err != nil || len(refs) == 0 {
		return nil, err
	}
	if _, err := writeBundle(w, st, refs, nil); err != nil {
		return nil, err
	}
	return refs, nil
}

// ReadBundleHeader reads a bundle's header (v2, or v3 with only the sha1
// object format) up to the packfile, which r is then positioned at, and
// returns its refs; as ReadBundleHeaderPrereqs does, without the prerequisites.
func ReadBundleHeader(r *bufio.Reader) ([]BundleRef, error) {
	refs, _, err := ReadBundleHeaderPrereqs(r)
	return refs, err
}
