package share

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/revlist"
	"github.com/go-git/go-git/v5/storage"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// bundleV2 and bundleV3 are the first lines of git's bundle formats.
const (
	bundleV2 = "# v2 git bundle"
	bundleV3 = "# v3 git bundle"
)

// maxBundleRefs bounds the ref lines of a bundle read.
const maxBundleRefs = 100_000

// BundleRef is one ref line of a bundle.
type BundleRef struct {
	Name string
	Hash plumbing.Hash
}

// shadowRefs returns the hash refs under refs/ in st, sorted by name.
func shadowRefs(st storage.Storer) ([]BundleRef, error) {
	iter, err := st.IterReferences()
	if err != nil {
		return nil, fmt.Errorf("listing refs: %w", err)
	}
	var refs []BundleRef
	err = iter.ForEach(func(r *plumbing.Reference) error {
		if r.Type() == plumbing.HashReference && validRefName(r.Name().String()) {
			refs = append(refs, BundleRef{Name: r.Name().String(), Hash: r.Hash()})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing refs: %w", err)
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].Name < refs[j].Name })
	return refs, nil
}

// writeBundle writes a v2 bundle of refs whose packfile holds the objects
// they reach that prereqs (commits the reader already has) do not; each
// prerequisite is a "-<hash>" line, as git writes for an incremental bundle.
// Objects are packed whole (no delta search), streamed one at a time. It returns the
// number of objects packed; 0 writes nothing.
func writeBundle(w io.Writer, st storage.Storer, refs []BundleRef, prereqs []plumbing.Hash) (int, error) {
	roots := make([]plumbing.Hash, 0, len(refs))
	for _, r := range refs {
		roots = append(roots, r.Hash)
	}
	hashes, err := revlist.Objects(st, roots, prereqs)
	if err != nil {
		return 0, fmt.Errorf("walking the checkpoints' objects: %w", err)
	}
	if len(hashes) == 0 {
		return 0, nil
	}
	// Sorted, so the same checkpoints make the same bundle (and the same objects in the store).
	sort.Slice(hashes, func(i, j int) bool { return bytes.Compare(hashes[i][:], hashes[j][:]) < 0 })
	var head bytes.Buffer
	head.WriteString(bundleV2 + "\n")
	for _, p := range prereqs {
		fmt.Fprintf(&head, "-%s\n", p)
	}
	for _, r := range refs {
		fmt.Fprintf(&head, "%s %s\n", r.Hash, r.Name)
	}
	head.WriteString("\n")
	if _, err := w.Write(head.Bytes()); err != nil {
		return 0, err
	}
	if err := writePack(w, st, hashes); err != nil {
		return 0, fmt.Errorf("packing the checkpoints: %w", err)
	}
	return len(hashes), nil
}

// ReadBundleHeaderPrereqs reads a bundle's header (v2, or v3 with only the sha1
// object format) up to the packfile, which r is then positioned at, and
// returns its refs and the prerequisite commits of an incremental bundle (at
// most maxBundleRefs of them).
func ReadBundleHeaderPrereqs(r *bufio.Reader) ([]BundleRef, []plumbing.Hash, error) {
	var prereqs []plumbing.Hash
	first, err := readLine(r)
	if err != nil {
		return nil, nil, fmt.Errorf("bundle header: %w", err)
	}
	if first != bundleV2 && first != bundleV3 {
		return nil, nil, fmt.Errorf("not a git bundle (first line %q)", clip(first))
	}
	var refs []BundleRef
	for {
		line, err := readLine(r)
		if err != nil {
			return nil, nil, fmt.Errorf("bundle header: %w", err)
		}
		switch {
		case line == "":
			if len(refs) == 0 {
				return nil, nil, fmt.Errorf("bundle holds no refs")
			}
			return refs, prereqs, nil
		case first == bundleV3 && strings.HasPrefix(line, "@"):
			if line != "@object-format=sha1" && !strings.HasPrefix(line, "@filter=") {
				return nil, nil, fmt.Errorf("bundle capability %q is not supported", clip(line))
			}
			if strings.HasPrefix(line, "@filter=") {
				return nil, nil, fmt.Errorf("a partial (filtered) bundle is not supported")
			}
		case strings.HasPrefix(line, "-"):
			h, _, _ := strings.Cut(line[1:], " ")
			if !isHex(h, 40) {
				return nil, nil, fmt.Errorf("bundle prerequisite line %q: expected -<40 hex>", clip(line))
			}
			if len(prereqs) == maxBundleRefs {
				return nil, nil, fmt.Errorf("bundle has more than %d prerequisites", maxBundleRefs)
			}
			prereqs = append(prereqs, plumbing.NewHash(h))
		default:
			ref, err := parseRefLine(line)
			if err != nil {
				return nil, nil, err
			}
			if len(refs) == maxBundleRefs {
				return nil, nil, fmt.Errorf("bundle has more than %d refs", maxBundleRefs)
			}
			refs = append(refs, ref)
		}
	}
}

func parseRefLine(line string) (BundleRef, error) {
	h, name, ok := strings.Cut(line, " ")
	if !ok || !isHex(h, 40) {
		return BundleRef{}, fmt.Errorf("bundle ref line %q: expected <40 hex> <refname>", clip(line))
	}
	if name != "HEAD" && !validRefName(name) {
		return BundleRef{}, fmt.Errorf("bundle ref line %q: bad ref name", clip(line))
	}
	return BundleRef{Name: name, Hash: plumbing.NewHash(h)}, nil
}

// validRefName accepts refs/<parts> whose parts are git-valid and harmless.
func validRefName(name string) bool {
	if !strings.HasPrefix(name, "refs/") || len(name) > 1024 || strings.HasSuffix(name, "/") ||
		strings.HasSuffix(name, ".lock") || strings.Contains(name, "..") || strings.Contains(name, "//") || strings.Contains(name, "@{") {
		return false
	}
	for _, part := range strings.Split(name, "/") {
		if part == "" || strings.HasPrefix(part, ".") {
			return false
		}
	}
	for _, c := range name {
		if c <= ' ' || c == 0x7f || strings.ContainsRune("~^:?*[\\", c) {
			return false
		}
	}
	return true
}

func readLine(r *bufio.Reader) (string, error) {
	var b []byte
	for {
		c, err := r.ReadByte()
		if err != nil {
			return "", fmt.Errorf("truncated: %w", err)
		}
		if c == '\n' {
			return string(b), nil
		}
		if len(b) >= 4096 {
			return "", fmt.Errorf("a header line is longer than 4096 bytes")
		}
		b = append(b, c)
	}
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// Unbundle reads a bundle into st: its prerequisites must already be there
// (earlier bundles of the chain put them), its packfile is first scanned with
// inflation bounded (see checkPack), then stored, and every ref's object must
// have arrived. A pack of whole objects going into a repository on disk is
// stored as it is, beside the index checkPack made as it streamed by (no
// object is ever held whole in memory); another goes through go-git's parser.
// It returns the bundle's refs; it sets none.
func Unbundle(st storage.Storer, r io.ReadSeeker, size int64) ([]BundleRef, error) {
	br := bufio.NewReader(r)
	refs, prereqs, err := ReadBundleHeaderPrereqs(br)
	if err != nil {
		return nil, err
	}
	for _, p := range prereqs {
		if _, err := st.EncodedObject(plumbing.CommitObject, p); err != nil {
			return nil, fmt.Errorf("bundle needs commit %s, which the bundles before it do not hold", p)
		}
	}
	packStart, err := r.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil, err
	}
	packStart -= int64(br.Buffered())
	packSize := size - packStart
	idx, err := checkPack(br, packSize)
	if err != nil {
		return nil, err
	}
	if _, err := r.Seek(packStart, io.SeekStart); err != nil {
		return nil, err
	}
	if fs, ok := st.(*filesystem.Storage); ok && idx != nil {
		err = storePack(fs, r, packSize, idx)
	} else {
		err = packfile.UpdateObjectStorage(st, bufio.NewReader(r))
	}
	if err != nil {
		return nil, fmt.Errorf("bundle packfile: %w", err)
	}
	for _, ref := range refs {
		if _, err := st.EncodedObject(plumbing.AnyObject, ref.Hash); err != nil {
			return nil, fmt.Errorf("bundle ref %s: object %s is not in the packfile", ref.Name, ref.Hash)
		}
	}
	return refs, nil
}
