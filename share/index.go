package share

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/replaytool/replay/internal/errkind"
	"github.com/replaytool/replay/store"
)

// IndexFormat is the version of the run index this package writes and reads.
// Format 2 stores large files and checkpoint bundles as chunks, checkpoint
// history as a chain of incremental bundles, and the project's identity.
const IndexFormat = 2

// Bounds of what an index may describe.
const (
	maxIndex   = store.MaxObject // bytes of index.json
	maxFiles   = 200_000
	maxChunks  = 1 << 20 // chunks of one blob: 8 TiB at ChunkSize
	maxBundles = 10_000  // checkpoint bundles of one run
	maxRefs    = 100_000 // checkpoint refs of one run
	maxBlob    = 1 << 43 // one file or bundle
	maxStat    = 96      // bytes of a File's stat line
	maxPathLen = 4096    // bytes of a run file's path
	maxPartLen = 255     // bytes of one of its names
)

// ChunkSize is the size of the chunks a file or bundle larger than it is
// stored as (each chunk an object of its own, so memory stays bounded and an
// unchanged chunk is never uploaded twice).
const ChunkSize = 8 << 20

// Index is a run's table of contents in the store: runs/<Run>/index.json.
type Index struct {
	Format int `json:"format"`
	// Run is the run's id: the session id, a dash, and 12 hex digits of the
	// sha256 of the project's identity and the manifest's first line (RunID).
	Run string `json:"run"`
	// Session is the pipeline's session id.
	Session string `json:"session"`
	// Project is <H> on the machine that pushed (16 hex digits).
	Project string `json:"project"`
	// ProjectID is the project's identity, the same in every clone:
	// "git:<root commit>" or "id:<32 hex>" (a stored random id).
	ProjectID string `json:"project_id"`
	// Manifest is the path of the run's manifest.jsonl among Files.
	Manifest string `json:"manifest"`
	// Files are the run's files, sorted by path; paths are relative to the
	// project folder ("memory/..." for the scratch dir).
	Files []File `json:"files"`
	// Checkpoints is the shadow checkpoint repository, nil when the run has none.
	Checkpoints *Checkpoints `json:"checkpoints"`
	// Replay is the version of replay that pushed the run (informative).
	Replay string `json:"replay,omitempty"`
}

// Blob is content in the store: one object blobs/sha256/<SHA256> when Chunks
// is empty, else the concatenation of the chunk objects Chunks names.
type Blob struct {
	Size   int64    `json:"size"`
	SHA256 string   `json:"sha256"`
	Chunks []string `json:"chunks,omitempty"`
}

// File is one file of a run: its path, mode (0644 or 0755) and content.
// Stat is the pushing machine's size, mtime, ctime and inode, so a push of
// an unchanged file reads nothing.
type File struct {
	Path string `json:"-"`
	Mode string `json:"mode"`
	Blob
	Stat string `json:"stat,omitempty"`
}

type fileJSON struct {
	Path    string `json:"path,omitempty"`
	PathB64 string `json:"path_b64,omitempty"`
	Mode    string `json:"mode"`
	Blob
	Stat string `json:"stat,omitempty"`
}

// MarshalJSON writes the path as text, or base64 when it is not UTF-8 (any
// name the filesystem allows is kept byte for byte).
func (f File) MarshalJSON() ([]byte, error) {
	j := fileJSON{Path: f.Path, Mode: f.Mode, Blob: f.Blob, Stat: f.Stat}
	if !utf8.ValidString(f.Path) {
		j.Path, j.PathB64 = "", base64.StdEncoding.EncodeToString([]byte(f.Path))
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (f *File) UnmarshalJSON(data []byte) error {
	var j fileJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return err
	}
	*f = File{Path: j.Path, Mode: j.Mode, Blob: j.Blob, Stat: j.Stat}
	if j.PathB64 != "" {
		raw, err := base64.StdEncoding.DecodeString(j.PathB64)
		if err != nil || j.Path != "" {
			return fmt.Errorf("path_b64 %q: not base64, or given with path", clip(j.PathB64))
		}
		f.Path = string(raw)
	}
	return nil
}

// Checkpoints is the shadow checkpoint repository: its refs and HEAD, and
// the chain of git bundles that holds its history. The first bundle is
// complete; each later one holds only the objects new since the bundles
// before it (its prerequisites are their tips), so a new checkpoint uploads
// only its new objects.
type Checkpoints struct {
	// Head is the shadow repository's HEAD branch ("refs/heads/main"), "" if detached.
	Head    string      `json:"head,omitempty"`
	Refs    []BundleRef `json:"refs"`
	Bundles []Blob      `json:"bundles"`
}

// MarshalJSON writes a ref as {"name","hash"}.
func (r BundleRef) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Name string `json:"name"`
		Hash string `json:"hash"`
	}{r.Name, r.Hash.String()})
}

// UnmarshalJSON reads a ref written by MarshalJSON, checking both fields.
func (r *BundleRef) UnmarshalJSON(data []byte) error {
	var j struct {
		Name string `json:"name"`
		Hash string `json:"hash"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return err
	}
	ref, err := parseRefLine(j.Hash + " " + j.Name)
	if err != nil {
		return err
	}
	*r = ref
	return nil
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
// once, hashes of 64 hex digits, sizes and chunk lists that agree. Anything
// else is ErrBadIndex naming the field.
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
		return fmt.Errorf("field format: %d is not %d (another version of replay wrote it: push the run again with this one)", ix.Format, IndexFormat)
	}
	if err := CheckRunID(ix.Run); err != nil {
		return fmt.Errorf("field run: %v", err)
	}
	if !isHex(ix.Project, 16) {
		return fmt.Errorf("field project: %q is not 16 hex digits", clip(ix.Project))
	}
	if err := checkProjectID(ix.ProjectID); err != nil {
		return fmt.Errorf("field project_id: %v", err)
	}
	if !isDigits(ix.Session) || !strings.HasPrefix(ix.Run, ix.Session+"-") {
		return fmt.Errorf("field session: %q is not the session of run %q", clip(ix.Session), ix.Run)
	}
	if len(ix.Files) > maxFiles {
		return fmt.Errorf("field files: more than %d files", maxFiles)
	}
	seen := map[string]bool{}
	for i, f := range ix.Files {
		if err := checkFile(f); err != nil {
			return fmt.Errorf("field files[%d]: %v", i, err)
		}
		if seen[f.Path] {
			return fmt.Errorf("field files[%d]: %q is listed twice", i, f.Path)
		}
		seen[f.Path] = true
	}
	for i, f := range ix.Files {
		for dir := path.Dir(f.Path); dir != "."; dir = path.Dir(dir) {
			if seen[dir] {
				return fmt.Errorf("field files[%d]: %q is inside %q, which is listed as a file", i, f.Path, dir)
			}
		}
	}
	if !seen[ix.Manifest] || path.Base(ix.Manifest) != "manifest.jsonl" {
		return fmt.Errorf("field manifest: %q is not a manifest.jsonl among the files", clip(ix.Manifest))
	}
	if c := ix.Checkpoints; c != nil {
		if err := c.check(); err != nil {
			return fmt.Errorf("field checkpoints.%v", err)
		}
	}
	return nil
}

func (c *Checkpoints) check() error {
	if c.Head != "" && !validRefName(c.Head) {
		return fmt.Errorf("head: %q is not a ref name", clip(c.Head))
	}
	if len(c.Refs) == 0 || len(c.Refs) > maxRefs {
		return fmt.Errorf("refs: %d refs (1 to %d)", len(c.Refs), maxRefs)
	}
	names := map[string]bool{}
	for i, r := range c.Refs {
		if names[r.Name] || r.Name == "HEAD" {
			return fmt.Errorf("refs[%d]: %q is listed twice, or is HEAD", i, r.Name)
		}
		names[r.Name] = true
	}
	if len(c.Bundles) == 0 || len(c.Bundles) > maxBundles {
		return fmt.Errorf("bundles: %d bundles (1 to %d)", len(c.Bundles), maxBundles)
	}
	for i, b := range c.Bundles {
		if err := b.check(); err != nil {
			return fmt.Errorf("bundles[%d]: %v", i, err)
		}
	}
	return nil
}

// check refuses a blob whose hash, size or chunks are malformed or disagree:
// a single object is at most ChunkSize, a chunked blob has exactly the
// chunks its size needs.
func (b Blob) check() error {
	if !isHex(b.SHA256, 64) {
		return fmt.Errorf("sha256 %q is not 64 hex digits", clip(b.SHA256))
	}
	if b.Size < 0 || b.Size > maxBlob {
		return fmt.Errorf("size %d out of range", b.Size)
	}
	if len(b.Chunks) == 0 {
		if b.Size > ChunkSize {
			return fmt.Errorf("size %d needs chunks", b.Size)
		}
		return nil
	}
	if len(b.Chunks) > maxChunks || int64(len(b.Chunks)) != (b.Size+ChunkSize-1)/ChunkSize || b.Size <= ChunkSize {
		return fmt.Errorf("%d chunks for %d bytes (want %d of %d bytes)", len(b.Chunks), b.Size, (b.Size+ChunkSize-1)/ChunkSize, ChunkSize)
	}
	for i, c := range b.Chunks {
		if !isHex(c, 64) {
			return fmt.Errorf("chunks[%d] %q is not 64 hex digits", i, clip(c))
		}
	}
	return nil
}

func checkFile(f File) error {
	if err := CheckPath(f.Path); err != nil {
		return err
	}
	if f.Mode != "0644" && f.Mode != "0755" {
		return fmt.Errorf("%q: mode %q is not 0644 or 0755", f.Path, clip(f.Mode))
	}
	if len(f.Stat) > maxStat {
		return fmt.Errorf("%q: stat longer than %d bytes", f.Path, maxStat)
	}
	if err := f.Blob.check(); err != nil {
		return fmt.Errorf("%q: %v", f.Path, err)
	}
	return nil
}

// CheckPath refuses a run file's path that could write outside the run's
// folders: it must be relative, slash-separated, without empty, "." or ".."
// parts or NUL bytes, and either under memory/ (the scratch dir) or exactly
// checkpoints/checkpoint-manifest.md (never a file of the shadow
// repository's git data). Any other name a filesystem allows (':', spaces,
// control characters, bytes that are not UTF-8) is a name like another; it
// is printed escaped.
func CheckPath(p string) error {
	if p == "" || len(p) > maxPathLen || strings.HasPrefix(p, "/") || strings.ContainsRune(p, 0) {
		return fmt.Errorf("path %q is not a relative path", clip(p))
	}
	for _, part := range strings.Split(p, "/") {
		if part == "." || part == ".." || part == "" || len(part) > maxPartLen {
			return fmt.Errorf("path %q has a bad part %q", clip(p), clip(part))
		}
	}
	if p == "checkpoints/"+shadowManifest {
		return nil
	}
	if !strings.HasPrefix(p, "memory/") {
		return fmt.Errorf("path %q is outside memory/ and is not checkpoints/%s", clip(p), shadowManifest)
	}
	return nil
}

// CheckRunID refuses a run id that is not <digits>-<12 hex>.
func CheckRunID(id string) error {
	sid, h, ok := strings.Cut(id, "-")
	if !ok || !isDigits(sid) || !isHex(h, 12) {
		return errkind.Errorf(ErrNoRun, "run id %q: expected <session>-<12 hex digits> (replay push prints it)", clip(id))
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
