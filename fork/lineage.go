package fork

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/replaytool/replay/internal/runfile"
	"github.com/replaytool/replay/internal/safewrite"
	"github.com/replaytool/replay/report"
)

// ForksDir is the folder of a run's scratch dir that holds its forks, one
// directory per fork session (forks of forks included).
const ForksDir = "replay-forks"

// LineageFile is the lineage record in a fork's directory.
const LineageFile = "lineage.json"

// ManifestFile is a fork's own manifest: only the entries the fork made itself.
const ManifestFile = "manifest.jsonl"

// WorktreeDir is the fork's isolated working tree inside its directory.
const WorktreeDir = "worktree"

// RecordVersion is the version of the lineage record format this package writes
// and reads.
const RecordVersion = 1

// Record is a fork's lineage record: where it comes from and what it changed.
type Record struct {
	Version int    `json:"version"`
	Session string `json:"session"`
	// Parent is the session of the run forked: the original run or another fork.
	Parent string `json:"parent_session"`
	// Root is the session of the original run at the top of the lineage.
	Root string `json:"root_session"`
	// RootManifest is the original run's manifest, the entries below the fork seq
	// are read from (through the parents' records).
	RootManifest string `json:"root_manifest"`
	// ForkSeq is the first seq the fork does not share with its parent.
	ForkSeq       int            `json:"fork_seq"`
	Reason        string         `json:"reason,omitempty"`
	Substitutions []Substitution `json:"substitutions"`
	CreatedAt     string         `json:"created_at"`
	// Checkpoint is the shadow checkpoint the worktree started from ("" when none).
	Checkpoint string `json:"checkpoint,omitempty"`
	// Worktree is the worktree's directory name inside the fork's directory.
	Worktree string `json:"worktree,omitempty"`
}

// Substitution is one recorded response the fork replaced.
type Substitution struct {
	Seq    int    `json:"seq"`
	File   string `json:"file"`
	SHA256 string `json:"sha256"`
	// Key is the recording key the response was saved under in the fork's store.
	Key string `json:"key,omitempty"`
}

// The patterns of a lineage record's fields, compiled on first use, not at start-up.
var (
	sessionRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9A-Za-z][0-9A-Za-z._-]{0,63}$`) })
	shaRE     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{64}$`) })
)

// ParseRecord reads a lineage record and checks every field a reader relies on;
// name is the file for the messages.
func ParseRecord(data []byte, name string) (*Record, error) {
	var r Record
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("%s: not a lineage record: %w", name, err)
	}
	switch {
	case r.Version != RecordVersion:
		return nil, fmt.Errorf("%s: field version: %d is not %d; this replay reads version %d lineage records only", name, r.Version, RecordVersion, RecordVersion)
	case !sessionRE().MatchString(r.Session):
		return nil, fmt.Errorf("%s: field session: %q is not a session id", name, r.Session)
	case !sessionRE().MatchString(r.Parent):
		return nil, fmt.Errorf("%s: field parent_session: %q is not a session id", name, r.Parent)
	case !sessionRE().MatchString(r.Root):
		return nil, fmt.Errorf("%s: field root_session: %q is not a session id", name, r.Root)
	case r.ForkSeq < 1:
		return nil, fmt.Errorf("%s: field fork_seq: %d is below 1", name, r.ForkSeq)
	case r.Worktree != "" && r.Worktree != WorktreeDir:
		return nil, fmt.Errorf("%s: field worktree: %q is not %q", name, r.Worktree, WorktreeDir)
	}
	for i, s := range r.Substitutions {
		if s.Seq < r.ForkSeq || !shaRE().MatchString(s.SHA256) {
			return nil, fmt.Errorf("%s: substitutions[%d]: seq %d below the fork seq %d, or sha256 %q not 64 hex digits", name, i, s.Seq, r.ForkSeq, s.SHA256)
		}
	}
	return &r, nil
}

// ReadRecord reads the lineage record of the fork directory dir.
func ReadRecord(dir string) (*Record, error) {
	path := filepath.Join(dir, LineageFile)
	data, err := runfile.ReadFile(path, runfile.Lineage)
	if err != nil {
		return nil, err
	}
	return ParseRecord(data, path)
}

// writeRecord writes r into the fork directory dir, crash-safe and never through
// a link.
func writeRecord(dir string, r *Record) error {
	var b bytes.Buffer
	if err := report.WriteJSON(&b, r); err != nil {
		return err
	}
	return safewrite.WriteAtomicIn(dir, LineageFile, b.Bytes())
}

// ListRecords reads the lineage records of every fork under the scratch dir,
// sorted by session; unreadable ones are returned as warnings.
func ListRecords(scratch string) ([]*Record, []string) {
	root := filepath.Join(scratch, ForksDir)
	ents, err := os.ReadDir(root)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, []string{err.Error()}
	}
	var out []*Record
	var warns []string
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		r, err := ReadRecord(filepath.Join(root, e.Name()))
		if err != nil {
			warns = append(warns, err.Error())
			continue
		}
		if r.Session != e.Name() {
			warns = append(warns, fmt.Sprintf("%s: the record names session %q; skipped", filepath.Join(root, e.Name(), LineageFile), r.Session))
			continue
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Session < out[j].Session })
	return out, warns
}

// placeForks hangs every fork node of nodes under its parent's node. A fork whose
// parent is not among them (a dangling parent_session), and every fork of a cycle
// of parent_session links (two records naming each other, one naming itself),
// would never be reached from the original run: it hangs under root instead, with
// a note, and a warning naming its record says so. Forks below a cycle stay under
// their parent. It returns the warnings, in the order of recs.
func placeForks(root *Node, nodes map[string]*Node, recs []*Record) []string {
	parentOf := make(map[string]string, len(recs))
	for _, r := range recs {
		if n, ok := nodes[r.Session]; ok && n != root {
			parentOf[r.Session] = r.Parent
		}
	}
	var warns []string
	for _, r := range recs {
		n, ok := nodes[r.Session]
		if !ok || n == root {
			continue
		}
		where := filepath.Join(n.Dir, LineageFile)
		parent, ok := nodes[r.Parent]
		switch cycle := lineageCycle(r.Session, parentOf); {
		case cycle != "":
			note := "its lineage records form a cycle (" + cycle + "); shown under the original run"
			n.Notes = append(n.Notes, note)
			warns = append(warns, fmt.Sprintf("%s: fork %s: %s", where, r.Session, note))
			parent = root
		case !ok:
			n.Notes = append(n.Notes, fmt.Sprintf("its parent %s is gone", r.Parent))
			warns = append(warns, fmt.Sprintf("%s: fork %s: its parent %s is gone; shown under the original run", where, r.Session, r.Parent))
			parent = root
		}
		parent.Children = append(parent.Children, n)
	}
	return warns
}

// lineageCycle returns the cycle of parent links session is on, written
// "a -> b -> a", or "" when following its parents leaves the forks (reaches the
// original run or a missing parent) without coming back to it.
func lineageCycle(session string, parentOf map[string]string) string {
	path := []string{session}
	cur := session
	for range len(parentOf) {
		next, ok := parentOf[cur]
		if !ok {
			return ""
		}
		path = append(path, next)
		if next == session {
			return strings.Join(path, " -> ")
		}
		cur = next
	}
	return ""
}
