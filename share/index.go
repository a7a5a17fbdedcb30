package share

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/replaytool/replay/internal/errkind"
	"github.com/replaytool/replay/store"
)

// IndexFormat is the version of the run index this package writes and reads.
const IndexFormat = 1

// maxIndex bounds an index's size, maxFiles its file count.
const (
	maxIndex = 64 << 20
	maxFiles = 200_000
)

// Index is a run's table of contents in the store: runs/<Run>/index.json.
type Index struct {
	Format int `json:"format"`
	// Run is the run's id: the session id, a dash, and the first 12 hex
	// digits of the sha256 of the manifest's first line (see RunID).
	Run string `json:"run"`
	// Session is the pipeline's session id.
	Session string `json:"session"`
	// Project is <H>, the 16 hex digits naming the project's folder.
	Project string `json:"project"`
	// Manifest is the path of the run's manifest.jsonl among Files.
	Manifest string `json:"manifest"`
	// Files are the run's files, sorted by path; paths are relative to the
	// project folder ("memory/..." for the scratch dir).
	Files []File `json:"files"`
	// Checkpoints is the git bundle of the shadow checkpoint repository, nil
	// when the run has none.
	Checkpoints *Bundle `json:"checkpoints"`
	// Replay is the version of replay that pushed the run (informative).
	Replay string `json:"replay,omitempty"`
}

// File is one file of a run: its path, mode (0644 or 0755) and content hash.
type File struct {
	Path   string `json:"path"`
	Mode   string `json:"mode"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Bundle is the checkpoints' git bundle object and the head of the shadow repository.
type Bundle struct {
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	// Head is the shadow repository's HEAD branch ("refs/heads/main"), "" if detached.
	Head string `json:"head,omitempty"`
}

// shadowManifest is the one file of the shadow repository kept as a plain file.
const shadowManifest = "checkpoint-manifest.md"

// BlobKey returns the store key of the object with hash hex.
func BlobKey(hex string) string { return "blobs/sha256/" + hex }

// IndexKey returns the store key of run id's index.
func IndexKey(run string) string { return "runs/" + run + "/index.json" }

// Marshal encodes the index deterministically (sorted files, indented JSON).
func (ix *Index) Marshal() []byte {
	slices.SortFunc(ix.Files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	data, err := json.MarshalIndent(ix, "", " ")
	if err != nil {
		panic(err) // plain strings and ints: cannot fail
	}
	return append(data, '\n')
}

// ParseIndex decodes and checks an index read from the store: the known
// format, a valid run id, every path a clean relative name inside the run's
// folders (the scratch dir, or the shadow repository's manifest) and listed
// once, hashes of 64 hex digits. Anything else is ErrBadIndex naming the field.
func ParseIndex(data []byte, where string) (*Index, error) {
	if len(data) > maxIndex {
		return nil, errkind.Errorf(ErrBadIndex, "%s: larger than %d bytes", where, maxIndex)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var ix Index
	if err := dec.Decode(&ix); err != nil {
		return nil, errkind.Errorf(ErrBadIndex, "%s: not a run index: %v", where, err)
	}
	if dec.More() {
		return nil, errkind.Errorf(ErrBadIndex, "%s: trailing data after the index", where)
	}
	if err := ix.check(); err != nil {
		return nil, errkind.Errorf(ErrBadIndex, "%s: %v; push the run again", where, err)
	}
	return &ix, nil
}

func (ix *Index) check() error {
	if ix.Format != IndexFormat {
		return fmt.Errorf("field format: %d is not %d (a newer replay wrote it?)", ix.Format, IndexFormat)
	}
	if err := CheckRunID(ix.Run); err != nil {
		return fmt.Errorf("field run: %v", err)
	}
	if !isHex(ix.Project, 16) {
		return fmt.Errorf("field project: %q is not 16 hex digits", ix.Project)
	}
	if !isDigits(ix.Session) || !strings.HasPrefix(ix.Run, ix.Session+"-") {
		return fmt.Errorf("field session: %q is not the session of run %q", ix.Session, ix.Run)
	}
	if len(ix.Files) > maxFiles {
		return fmt.Errorf("field files: more than %d files", maxFiles)
	}
	seen := map[string]bool{}
	for i, f := range ix.Files {
		if err := checkFile(f); err != nil {
			return fmt.Errorf("field files[%d]: %v", i, err)
		}
		if seen[strings.ToLower(f.Path)] {
			return fmt.Errorf("field files[%d]: %q is listed twice", i, f.Path)
		}
		seen[strings.ToLower(f.Path)] = true
	}
	for i, f := range ix.Files {
		for dir := path.Dir(f.Path); dir != "."; dir = path.Dir(dir) {
			if seen[strings.ToLower(dir)] {
				return fmt.Errorf("field files[%d]: %q is inside %q, which is listed as a file", i, f.Path, dir)
			}
		}
	}
	if !seen[strings.ToLower(ix.Manifest)] || path.Base(ix.Manifest) != "manifest.jsonl" {
		return fmt.Errorf("field manifest: %q is not a manifest.jsonl among the files", ix.Manifest)
	}
	if b := ix.Checkpoints; b != nil {
		if !isHex(b.SHA256, 64) || b.Size < 0 || b.Size > store.MaxObject {
			return fmt.Errorf("field checkpoints: bad hash or size")
		}
		if b.Head != "" && !validRefName(b.Head) {
			return fmt.Errorf("field checkpoints.head: %q is not a ref name", b.Head)
		}
	}
	return nil
}

func checkFile(f File) error {
	if err := CheckPath(f.Path); err != nil {
		return err
	}
	if f.Mode != "0644" && f.Mode != "0755" {
		return fmt.Errorf("%q: mode %q is not 0644 or 0755", f.Path, f.Mode)
	}
	if !isHex(f.SHA256, 64) {
		return fmt.Errorf("%q: sha256 %q is not 64 hex digits", f.Path, f.SHA256)
	}
	if f.Size < 0 || f.Size > store.MaxObject {
		return fmt.Errorf("%q: size %d out of range", f.Path, f.Size)
	}
	return nil
}

// CheckPath refuses a run file's path that could write outside the run's
// folders: it must be clean, relative, slash-separated, without "." or ".."
// parts or control characters, and either under memory/ (the scratch dir) or
// exactly checkpoints/checkpoint-manifest.md (never a file of the shadow
// repository's git data).
func CheckPath(p string) error {
	if p == "" || len(p) > 4096 || strings.HasPrefix(p, "/") || strings.Contains(p, "\\") || path.Clean(p) != p {
		return fmt.Errorf("path %q is not a clean relative path", p)
	}
	for _, part := range strings.Split(p, "/") {
		if part == "." || part == ".." || part == "" || len(part) > 255 {
			return fmt.Errorf("path %q has a bad part %q", p, part)
		}
		for _, c := range part {
			if c < 0x20 || c == 0x7f || c == ':' {
				return fmt.Errorf("path %q has a control character or ':'", p)
			}
		}
	}
	if p == "checkpoints/"+shadowManifest {
		return nil
	}
	if !strings.HasPrefix(p, "memory/") {
		return fmt.Errorf("path %q is outside memory/ and is not checkpoints/%s", p, shadowManifest)
	}
	return nil
}

// CheckRunID refuses a run id that is not <digits>-<12 hex>.
func CheckRunID(id string) error {
	sid, h, ok := strings.Cut(id, "-")
	if !ok || !isDigits(sid) || !isHex(h, 12) {
		return errkind.Errorf(ErrNoRun, "run id %q: expected <session>-<12 hex digits> (replay push prints it)", id)
	}
	return nil
}

func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil && strings.ToLower(s) == s
}

func isDigits(s string) bool {
	if s == "" || len(s) > 20 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
