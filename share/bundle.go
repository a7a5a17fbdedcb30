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

// WriteBundle writes a complete git bundle (v2: the header, one line per ref,
// a blank line, then a packfile of every object the refs reach) of the refs
// under refs/ in st, and returns the refs it holds. No refs: no bundle, (nil, nil).
func WriteBundle(w io.Writer, st storage.Storer) ([]BundleRef, error) {
	iter, err := st.IterReferences()
	if err != nil {
		return nil, fmt.Errorf("listing refs: %w", err)
	}
	var refs []BundleRef
	err = iter.ForEach(func(r *plumbing.Reference) error {
		if r.Type() == plumbing.HashReference && strings.HasPrefix(r.Name().String(), "refs/") {
			refs = append(refs, BundleRef{Name: r.Name().String(), Hash: r.Hash()})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing refs: %w", err)
	}
	if len(refs) == 0 {
		return nil, nil
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].Name < refs[j].Name })
	roots := make([]plumbing.Hash, 0, len(refs))
	var head bytes.Buffer
	head.WriteString(bundleV2 + "\n")
	for _, r := range refs {
		roots = append(roots, r.Hash)
		fmt.Fprintf(&head, "%s %s\n", r.Hash, r.Name)
	}
	head.WriteString("\n")
	hashes, err := revlist.Objects(st, roots, nil)
	if err != nil {
		return nil, fmt.Errorf("walking the checkpoints' objects: %w", err)
	}
	// Sorted, so the same checkpoints make the same bundle (and the same object in the store).
	sort.Slice(hashes, func(i, j int) bool { return bytes.Compare(hashes[i][:], hashes[j][:]) < 0 })
	if _, err := w.Write(head.Bytes()); err != nil {
		return nil, err
	}
	if _, err := packfile.NewEncoder(w, st, false).Encode(hashes, 10); err != nil {
		return nil, fmt.Errorf("packing the checkpoints: %w", err)
	}
	return refs, nil
}

// ReadBundleHeader reads a bundle's header (v2, or v3 with only the sha1
// object format) up to the packfile, which r is then positioned at. A bundle
// with prerequisites (a thin, incremental bundle) is refused: a run's
// checkpoints must be complete.
func ReadBundleHeader(r *bufio.Reader) ([]BundleRef, error) {
	first, err := readLine(r)
	if err != nil {
		return nil, fmt.Errorf("bundle header: %w", err)
	}
	if first != bundleV2 && first != bundleV3 {
		return nil, fmt.Errorf("not a git bundle (first line %q)", clip(first))
	}
	var refs []BundleRef
	for {
		line, err := readLine(r)
		if err != nil {
			return nil, fmt.Errorf("bundle header: %w", err)
		}
		switch {
		case line == "":
			if len(refs) == 0 {
				return nil, fmt.Errorf("bundle holds no refs")
			}
			return refs, nil
		case first == bundleV3 && strings.HasPrefix(line, "@"):
			if line != "@object-format=sha1" && !strings.HasPrefix(line, "@filter=") {
				return nil, fmt.Errorf("bundle capability %q is not supported", clip(line))
			}
			if strings.HasPrefix(line, "@filter=") {
				return nil, fmt.Errorf("a partial (filtered) bundle is not supported")
			}
		case strings.HasPrefix(line, "-"):
			return nil, fmt.Errorf("bundle needs prerequisite commits (%q): push a complete bundle", clip(line))
		default:
			ref, err := parseRefLine(line)
			if err != nil {
				return nil, err
			}
			if len(refs) == maxBundleRefs {
				return nil, fmt.Errorf("bundle has more than %d refs", maxBundleRefs)
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

// Unbundle reads a complete bundle into st: it stores the packfile's objects,
// checks every ref's object arrived, then sets the refs (not HEAD). It returns
// the refs set.
func Unbundle(st storage.Storer, r io.Reader) ([]BundleRef, error) {
	br := bufio.NewReader(r)
	refs, err := ReadBundleHeader(br)
	if err != nil {
		return nil, err
	}
	if err := packfile.UpdateObjectStorage(st, br); err != nil {
		return nil, fmt.Errorf("bundle packfile: %w", err)
	}
	roots := make([]plumbing.Hash, 0, len(refs))
	for _, ref := range refs {
		roots = append(roots, ref.Hash)
	}
	if _, err := revlist.Objects(st, roots, nil); err != nil {
		return nil, fmt.Errorf("bundle is incomplete: %w", err)
	}
	var out []BundleRef
	for _, ref := range refs {
		if _, err := st.EncodedObject(plumbing.AnyObject, ref.Hash); err != nil {
			return nil, fmt.Errorf("bundle ref %s: object %s is not in the packfile", ref.Name, ref.Hash)
		}
		if ref.Name == "HEAD" {
			continue
		}
		if err := st.SetReference(plumbing.NewHashReference(plumbing.ReferenceName(ref.Name), ref.Hash)); err != nil {
			return nil, fmt.Errorf("setting %s: %w", ref.Name, err)
		}
		out = append(out, ref)
	}
	return out, nil
}
