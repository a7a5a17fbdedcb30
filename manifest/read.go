package manifest

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"sort"

	"github.com/replaytool/replay/internal/errkind"
	"github.com/replaytool/replay/internal/runfile"
)

// MaxReadLineBytes is the longest line the reader looks at; a longer line is counted
// corrupt and skipped without being held in memory.
const MaxReadLineBytes = 64 << 10

// maxCorruptWarnings bounds the warnings kept for corrupt lines, so a file of garbage
// cannot fill memory with messages.
const maxCorruptWarnings = 100

// Manifest is a tolerantly read manifest.jsonl.
type Manifest struct {
	// Path is the file the manifest was read from.
	Path string
	// Entries holds the authoritative state of each seq, ascending by seq.
	Entries []Entry
	// Stats counts what the reader saw.
	Stats Stats
	// Warnings lists corrupt lines and inherited fields, by line number.
	Warnings []Warning
	// MaxSeq is the largest seq seen anywhere, a torn or corrupt line included.
	MaxSeq int
	// History holds, per seq, the statuses of its valid lines in line order
	// (for example dispatched, error, dispatched).
	History map[int][]Status
}

// Stats are the line counts of a manifest read.
type Stats struct {
	Lines   int
	Valid   int
	Corrupt int
	// TornTail is true when the last line has no newline and does not parse.
	TornTail bool
	// TornSeq is the seq readable in the torn last line, 0 if none.
	TornSeq int
	// Binary is true when a line held NUL bytes.
	Binary bool
}

// Warning is one problem found while reading, with its 1-based line number.
type Warning struct {
	Line int
	Text string
}

// String renders the warning as "line N: text".
func (w Warning) String() string { return fmt.Sprintf("line %d: %s", w.Line, w.Text) }

// Entry returns the authoritative entry of seq, or nil.
func (m *Manifest) Entry(seq int) *Entry {
	i, ok := slices.BinarySearchFunc(m.Entries, seq, func(e Entry, s int) int { return e.Seq - s })
	if !ok {
		return nil
	}
	return &m.Entries[i]
}

// Read reads the manifest at path tolerantly. A missing file, or one without a single
// valid entry, is an error that maps to exit 4 (nothing to resume); in the second case
// the returned Manifest still carries the counts and warnings.
func Read(path string) (*Manifest, error) {
	f, err := runfile.Open(path, runfile.Manifest)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errkind.New(ErrNoManifest, fmt.Sprintf("%s: Manifest not found. Cannot resume.", path))
	}
	if st, serr := os.Stat(path); err != nil && serr == nil && st.IsDir() {
		return nil, errkind.New(ErrNoManifest, fmt.Sprintf("%s: is a directory, not a manifest. Manifest not found. Cannot resume.", path))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: cannot open the manifest: %w", path, err)
	}
	defer f.Close()
	m, err := Parse(f, path)
	if err != nil {
		return nil, err
	}
	if m.Stats.Valid == 0 {
		msg := fmt.Sprintf("%s: Manifest is empty or entirely corrupted. Cannot resume.", path)
		switch {
		case m.Stats.Binary:
			msg += " It holds binary data, not JSON lines."
		case m.Stats.Lines > 0:
			msg += fmt.Sprintf(" None of its %d lines is a valid entry.", m.Stats.Lines)
		}
		return m, errkind.New(ErrNoManifest, msg)
	}
	return m, nil
}

// Parse reads a manifest stream tolerantly: corrupt and torn lines are counted and
// warned about, never fatal. Only a read error fails. name is used in messages.
func Parse(r io.Reader, name string) (*Manifest, error) {
	f := &folder{m: &Manifest{Path: name}}
	stop := make(chan struct{})
	defer close(stop)
	for b := range readBatches(r, stop) {
		<-b.done
		last := false
		for i := range b.lines {
			if last = f.fold(&b.lines[i]); last {
				break
			}
		}
		if b.err != nil {
			return nil, fmt.Errorf("%s: line %d: cannot read: %w", name, b.errNo, b.err)
		}
		b.release()
		if last {
			break
		}
	}
	return f.finish(), nil
}

// folder folds the parsed lines of a read, in line order, into a Manifest: the
// counts and warnings, and per seq the merged entry and the history of statuses.
type folder struct {
	m          *Manifest
	store      recStore
	index      seqIndex // seq -> position in store
	suppressed int
}

func (f *folder) warn(line int, format string, args ...any) {
	if len(f.m.Warnings) >= maxCorruptWarnings {
		f.suppressed++
		return
	}
	f.m.Warnings = append(f.m.Warnings, Warning{Line: line, Text: fmt.Sprintf(format, args...)})
}

// fold takes one line; last is true when nothing after it may be read (a torn tail).
func (f *folder) fold(pl *parsedLine) (last bool) {
	m := f.m
	if pl.kind == lineBlank {
		return false // blank lines are not entries and not damage
	}
	m.Stats.Lines++
	if pl.kind == lineEntry {
		pl.rec.line, pl.rec.first = pl.no, pl.no
		f.add(pl)
		return false
	}
	m.Stats.Corrupt++
	m.Stats.Binary = m.Stats.Binary || pl.binary
	if pl.seqOK {
		m.MaxSeq = max(m.MaxSeq, pl.seq)
	}
	switch {
	case pl.kind == lineTooLong:
		f.warn(pl.no, "longer than %d KiB; skipped (not a manifest line)", MaxReadLineBytes>>10)
	case !pl.terminated:
		m.Stats.TornTail = true
		if pl.seqOK {
			m.Stats.TornSeq = pl.seq
		}
		f.warn(pl.no, "torn last line (no newline, %s); skipped", pl.err)
		return true
	default:
		f.warn(pl.no, "corrupt line skipped: %s", pl.err)
	}
	return false
}

// add folds a valid line into the state of its seq.
func (f *folder) add(pl *parsedLine) {
	r := &pl.rec
	f.m.Stats.Valid++
	f.m.MaxSeq = max(f.m.MaxSeq, int(r.seq))
	status := statusNames[r.status]
	if i, ok := f.index.get(int(r.seq)); ok {
		prev, prevText := f.store.at(i)
		*prevText = r.inherit(pl.text, prev, *prevText)
		r.first = prev.first
		*prev = *r
		f.store.setExtra(i, pl.extra)
		h := f.store.history(i)
		*h = append(*h, status)
		return
	}
	f.index.set(int(r.seq), f.store.n)
	f.store.add(r, pl.text, pl.extra, status)
}

// finish builds the entries, ascending by seq, and adds the warnings that need the
// whole file.
func (f *folder) finish() *Manifest {
	m := f.m
	if f.suppressed > 0 {
		m.Warnings = append(m.Warnings, Warning{Line: m.Stats.Lines, Text: fmt.Sprintf("%d more damaged lines not listed", f.suppressed)})
	}
	if f.store.n > 0 {
		m.Entries = make([]Entry, f.store.n)
	}
	// The history map is built on a second core while the entries are: both only
	// read the store.
	done := make(chan struct{})
	go func() {
		defer close(done)
		h := make(map[int][]Status, f.store.n)
		for i := range f.store.n {
			r, _ := f.store.at(i)
			h[int(r.seq)] = *f.store.history(i)
		}
		m.History = h
	}()
	var s slabs
	k := 0
	f.index.each(func(i int) {
		r, text := f.store.at(i)
		r.entry(&m.Entries[k], *text, f.store.extras[i], &s)
		k++
	})
	<-done
	for _, e := range m.Entries {
		if len(e.Inherited) > 0 {
			m.Warnings = append(m.Warnings, Warning{Line: e.Line, Text: fmt.Sprintf("seq %d has no %s; kept the value of an earlier line of seq %d", e.Seq, joinAnd(e.Inherited), e.Seq)})
		}
	}
	sort.SliceStable(m.Warnings, func(i, j int) bool { return m.Warnings[i].Line < m.Warnings[j].Line })
	return m
}

// seqIndex maps a seq (0 to SeqLimit) to a position, in pages of 4,096 seqs made on
// first use: no hashing and no rehashing as it grows, and a stray large seq costs
// one page.
type seqIndex struct{ pages [][]int32 }

const seqPageBits = 12

func (x *seqIndex) get(seq int) (int, bool) {
	pg := seq >> seqPageBits
	if pg >= len(x.pages) || x.pages[pg] == nil {
		return 0, false
	}
	v := x.pages[pg][seq&(1<<seqPageBits-1)]
	return int(v) - 1, v != 0
}

func (x *seqIndex) set(seq, i int) {
	pg := seq >> seqPageBits
	for pg >= len(x.pages) {
		x.pages = append(x.pages, nil)
	}
	if x.pages[pg] == nil {
		x.pages[pg] = make([]int32, 1<<seqPageBits)
	}
	x.pages[pg][seq&(1<<seqPageBits-1)] = int32(i + 1)
}

// each calls fn with the position of every seq set, ascending by seq.
func (x *seqIndex) each(fn func(i int)) {
	for _, page := range x.pages {
		for _, v := range page {
			if v != 0 {
				fn(int(v) - 1)
			}
		}
	}
}

// recStore holds the records of a read's seqs, their texts and their histories of
// statuses in fixed chunks, so that growing it never copies what was already read;
// the record chunks hold no pointers, so the GC does not scan them. Unknown keys are
// rare: a map by position.
type recStore struct {
	recs       [][]rec
	texts      [][]string
	hists      [][][]Status
	statusSlab []Status
	extras     map[int]map[string]json.RawMessage
	n          int
}

const recChunk = 1024

// add adds the record of a new seq, its first status the history's.
func (s *recStore) add(r *rec, text string, extra map[string]json.RawMessage, status Status) {
	if s.n%recChunk == 0 {
		s.recs = append(s.recs, make([]rec, 0, recChunk))
		s.texts = append(s.texts, make([]string, 0, recChunk))
		s.hists = append(s.hists, make([][]Status, 0, recChunk))
	}
	last := len(s.recs) - 1
	s.recs[last] = append(s.recs[last], *r)
	s.texts[last] = append(s.texts[last], text)
	// Most seqs have two lines: give each a slot of two in a shared slab.
	if len(s.statusSlab)+2 > cap(s.statusSlab) {
		s.statusSlab = make([]Status, 0, 2*recChunk)
	}
	s.statusSlab = append(s.statusSlab, status, "")
	n := len(s.statusSlab)
	s.hists[last] = append(s.hists[last], s.statusSlab[n-2:n-1:n])
	s.setExtra(s.n, extra)
	s.n++
}

// history returns the statuses of position i.
func (s *recStore) history(i int) *[]Status { return &s.hists[i/recChunk][i%recChunk] }

// at returns the record at position i and its text.
func (s *recStore) at(i int) (*rec, *string) {
	return &s.recs[i/recChunk][i%recChunk], &s.texts[i/recChunk][i%recChunk]
}

// setExtra sets the unknown keys of position i.
func (s *recStore) setExtra(i int, extra map[string]json.RawMessage) {
	switch {
	case extra != nil:
		if s.extras == nil {
			s.extras = make(map[int]map[string]json.RawMessage)
		}
		s.extras[i] = extra
	case s.extras != nil:
		delete(s.extras, i)
	}
}

// readLine returns the next line (with its newline when it has one). A line longer
// than the reader's buffer is discarded chunk by chunk: tooLong is set and line holds
// only its first chunk. eof is set when the stream ended (line may still hold a last
// line without newline).
func readLine(br *bufio.Reader) (line []byte, tooLong, eof bool, err error) {
	line, err = br.ReadSlice('\n')
	switch {
	case err == nil:
		return line, false, false, nil
	case errors.Is(err, io.EOF):
		return line, false, true, nil
	case !errors.Is(err, bufio.ErrBufferFull):
		return nil, false, false, err
	}
	// Keep a small head of the long line (to scrape a seq), drop the rest.
	head := append([]byte(nil), line[:min(len(line), 256)]...)
	for {
		_, err = br.ReadSlice('\n')
		switch {
		case err == nil:
			return head, true, false, nil
		case errors.Is(err, io.EOF):
			return head, true, true, nil
		case !errors.Is(err, bufio.ErrBufferFull):
			return nil, true, false, err
		}
	}
}

func joinAnd(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	s := items[0]
	for _, it := range items[1 : len(items)-1] {
		s += ", " + it
	}
	return s + " and " + items[len(items)-1]
}
