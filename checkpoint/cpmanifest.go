package checkpoint

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/replaytool/replay/internal/paths"
	"github.com/replaytool/replay/internal/runfile"
	"github.com/replaytool/replay/internal/safewrite"
)

// ManifestFile is the name of the human-readable checkpoint index.
const ManifestFile = "checkpoint-manifest.md"

// ManifestRows is how many rows checkpoint-manifest.md keeps; the shadow log keeps all.
const ManifestRows = 50

const manifestTimeLayout = "2006-01-02 15:04:05"

// manifestRow is one table row of checkpoint-manifest.md.
type manifestRow struct {
	Hash, Timestamp, Reason, Source string
	Line                            int
	// Raw is the row's text as found, kept verbatim when the table is rewritten.
	Raw string
}

// manifestPaths are where checkpoint-manifest.md is looked for: inside the shadow git
// dir (where Crucible keeps it and replay writes it), then beside it (where earlier
// versions of replay wrote it).
func (s *Store) manifestPaths() []string {
	return []string{paths.CheckpointManifest(s.shadowDir), paths.LegacyCheckpointManifest(s.shadowDir)}
}

// readManifest returns the rows of the first checkpoint-manifest.md found and its
// path; an empty path when there is none.
func (s *Store) readManifest() ([]manifestRow, string, error) {
	for _, p := range s.manifestPaths() {
		data, err := runfile.ReadFile(p, runfile.CheckpointManifest)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, "", fmt.Errorf("%s: cannot read the checkpoint manifest (%v); using the shadow commit log", p, err)
		}
		return parseManifest(data), p, nil
	}
	return nil, "", nil
}

// parseManifest reads every well-formed table row; anything else is skipped.
func parseManifest(data []byte) []manifestRow {
	var rows []manifestRow
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(text, "|") {
			continue
		}
		cells := strings.Split(strings.Trim(text, "|"), "|")
		if len(cells) < 3 {
			continue
		}
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if len(cells[0]) < 4 || !isHex(cells[0]) {
			continue // header, separator or a damaged row
		}
		r := manifestRow{Hash: strings.ToLower(cells[0]), Timestamp: cells[1], Reason: cells[2], Line: line, Raw: text}
		if len(cells) > 3 {
			r.Source = strings.Join(cells[3:], " | ")
		}
		rows = append(rows, r)
	}
	return rows
}

// appendManifest adds the row of cp to checkpoint-manifest.md inside the shadow git
// dir in Crucible's shape (table rows only, the time as local wall clock), keeping
// the last ManifestRows rows. Rows already there are kept as written; when only the
// older table beside the shadow dir exists, its rows are carried over (that file
// itself is left as it is).
func (s *Store) appendManifest(cp Checkpoint) error {
	path := paths.CheckpointManifest(s.shadowDir)
	var rows []manifestRow
	for _, p := range s.manifestPaths() {
		data, err := runfile.ReadFile(p, runfile.CheckpointManifest)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("%s: cannot read the checkpoint manifest: %w", p, err)
		}
		rows = parseManifest(data)
		break
	}
	rows = append(rows, manifestRow{Hash: cp.Short, Timestamp: cp.Time.In(time.Local).Format(manifestTimeLayout), Reason: cp.Reason, Source: cp.Source})
	if len(rows) > ManifestRows {
		rows = rows[len(rows)-ManifestRows:]
	}
	var b strings.Builder
	for _, r := range rows {
		if r.Raw != "" {
			b.WriteString(r.Raw + "\n")
			continue
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", r.Hash, r.Timestamp, r.Reason, r.Source)
	}
	if err := safewrite.WriteAtomic(path, []byte(b.String())); err != nil {
		return fmt.Errorf("writing the checkpoint manifest: %w", err)
	}
	return nil
}
