package corpus

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/replaytool/replay/internal/errkind"
	"github.com/replaytool/replay/internal/runfile"
	"github.com/replaytool/replay/internal/safewrite"
	"github.com/replaytool/replay/mutate"
	"github.com/replaytool/replay/stats"
)

// LogFile is the corpus log in the output directory: a header line with the
// settings, then one line per finished pipeline.
const LogFile = "corpus-log.jsonl"

// logKind bounds the size of a corpus log read back.
var logKind = runfile.Kind{What: "corpus log", Max: 64 << 20}

// Settings are the arguments every pipeline of a corpus is replayed with. Two
// corpus runs may share a log only when their settings are equal (Mutations, the
// flags as given, aside: the replacement files' content counts, in MutationHash).
type Settings struct {
	Mutations    []string `json:"mutations"`
	MutationHash string   `json:"mutation_hash"`
	Replicas     int      `json:"replicas"`
	UntilDecided bool     `json:"until_decided,omitempty"`
	MaxReplicas  int      `json:"max_replicas,omitempty"`
	Agent        string   `json:"agent"`
	Check        string   `json:"check,omitempty"`
	Metric       string   `json:"metric"`
	// Margin is the decision rule's --margin (0: none).
	Margin float64 `json:"margin,omitempty"`
	// Alpha is the decision rule's --alpha for the per-pipeline tests and
	// the corpus decision alike (0, as in logs written before it was kept:
	// the default rule's).
	Alpha float64 `json:"alpha,omitempty"`
}

// MutationHash is the sha256 of the mutations' original names and replacement
// contents, in order: what the mutation is, wherever its files are.
func MutationHash(muts []mutate.Mutation) string {
	h := sha256.New()
	for _, m := range muts {
		fmt.Fprintf(h, "%s\x00%d\x00", m.Orig, len(m.Text))
		h.Write(m.Text)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// alpha is the decision rule's alpha under s.
func (s Settings) alpha() float64 {
	if s.Alpha == 0 {
		return stats.DefaultRule().Alpha
	}
	return s.Alpha
}

// fingerprint is s without the flags as given (and the default alpha as
// unset, as logs written before alpha was kept have it).
func (s Settings) fingerprint() string {
	s.Mutations = nil
	if s.alpha() == stats.DefaultRule().Alpha {
		s.Alpha = 0
	}
	b, _ := json.Marshal(s)
	return string(b)
}

// Key identifies one pipeline's replay under s in the log.
func (s Settings) Key(dir string) string {
	sum := sha256.Sum256([]byte(dir + "\x00" + s.fingerprint()))
	return hex.EncodeToString(sum[:16])
}

// differences names the settings in which s and o differ.
func (s Settings) differences(o Settings) string {
	var d []string
	add := func(name string, a, b any) {
		if fmt.Sprint(a) != fmt.Sprint(b) {
			d = append(d, fmt.Sprintf("%s %v (now %v)", name, a, b))
		}
	}
	add("mutation content", short(s.MutationHash), short(o.MutationHash))
	add("--replicas", s.Replicas, o.Replicas)
	add("--until-decided", s.UntilDecided, o.UntilDecided)
	add("--max-replicas", s.MaxReplicas, o.MaxReplicas)
	add("--agent", s.Agent, o.Agent)
	add("--check", s.Check, o.Check)
	add("--metric", s.Metric, o.Metric)
	add("--margin", s.Margin, o.Margin)
	add("--alpha", s.alpha(), o.alpha())
	return strings.Join(d, ", ")
}

func short(h string) string { return h[:min(12, len(h))] }

// logLine is one line of the log: the header (Settings set) or a pipeline (Row set).
type logLine struct {
	Kind     string    `json:"kind"`
	Format   string    `json:"format,omitempty"`
	Settings *Settings `json:"settings,omitempty"`
	Row      *Row      `json:"row,omitempty"`
}

// corpusLog is an open corpus log: its path and the pipelines it holds by key.
type corpusLog struct {
	path string
	done map[string]Row
}

// openLog reads the log name in dir, refusing one of other settings, or starts
// it with the header line when there is none.
func openLog(dir, name string, s Settings) (*corpusLog, error) {
	lg := &corpusLog{path: filepath.Join(dir, name), done: map[string]Row{}}
	data, err := runfile.ReadFile(lg.path, logKind)
	if errors.Is(err, os.ErrNotExist) {
		if err := safewrite.MkdirAll(dir); err != nil {
			return nil, fmt.Errorf("corpus output %s: %w; give a directory replay can create", dir, err)
		}
		return lg, safewrite.AppendLine(lg.path, headerLine(s))
	}
	if err != nil {
		return nil, fmt.Errorf("corpus log %s: %w", lg.path, err)
	}
	if !bytes.Contains(data, []byte("\n")) {
		// Killed before the header was complete: nothing was recorded yet.
		return lg, safewrite.WriteAtomic(lg.path, headerLine(s))
	}
	if lg.done, err = parseLog(lg.path, data, s); err != nil {
		return nil, err
	}
	if data[len(data)-1] != '\n' {
		// Close a line torn by a kill, so the next one starts on its own line.
		return lg, safewrite.AppendLine(lg.path, nil)
	}
	return lg, nil
}

func headerLine(s Settings) []byte {
	b, _ := json.Marshal(logLine{Kind: "corpus", Format: Format, Settings: &s})
	return append(b, '\n')
}

// parseLog reads the finished pipelines of a log's bytes, by key; a missing or
// bad header, or one of other settings than s, is an ErrMismatch error. A line
// that is not JSON (torn by a kill mid-append) is left out: its pipeline runs again.
func parseLog(path string, data []byte, s Settings) (map[string]Row, error) {
	done := map[string]Row{}
	lines := bytes.Split(data, []byte("\n"))
	if len(bytes.TrimSpace(lines[0])) == 0 {
		return nil, errkind.Errorf(ErrMismatch, "%s:1: no corpus log header; give another --out or remove the file", path)
	}
	for i, raw := range lines {
		if len(bytes.TrimSpace(raw)) == 0 {
			continue
		}
		var l logLine
		if err := json.Unmarshal(raw, &l); err != nil {
			if i > 0 {
				continue // a line torn by a kill: that pipeline runs again
			}
			return nil, errkind.Errorf(ErrMismatch, "%s:1: not a corpus log header (%v); give another --out or remove the file", path, err)
		}
		switch {
		case i == 0 && (l.Kind != "corpus" || l.Settings == nil):
			return nil, errkind.Errorf(ErrMismatch, "%s:1: not a corpus log header; give another --out", path)
		case i == 0 && l.Settings.fingerprint() != s.fingerprint():
			return nil, errkind.Errorf(ErrMismatch, "%s was written by a corpus run with other arguments: %s; rerun with the same arguments to continue it, or give another --out", path, l.Settings.differences(s))
		case i > 0 && l.Kind == "pipeline" && l.Row != nil && l.Row.Key != "":
			done[l.Row.Key] = *l.Row
		}
	}
	return done, nil
}

// append records a finished pipeline (fsynced before it returns).
func (lg *corpusLog) append(r Row) error {
	return lg.write(logLine{Kind: "pipeline", Row: &r})
}

func (lg *corpusLog) write(l logLine) error {
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	return safewrite.AppendLine(lg.path, b)
}
