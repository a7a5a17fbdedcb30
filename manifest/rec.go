package manifest

import "encoding/json"

// rec is a parsed manifest line, or the merged state of a seq while a manifest is
// read, in a form that is cheap to copy and that holds no pointers, so the garbage
// collector never looks into a store of them: numbers in place, null-ness as bits,
// and every text field as a span of one string per line, kept beside the record (its
// text; unknown keys, rare, are kept beside it too). Entries are built from the
// records once, at the end of a read (entry), so the pointer-rich Entry is written
// once instead of on every line.
type rec struct {
	seq                                      int32  // at most SeqLimit
	has                                      uint16 // hPhase... : the nullable field is not null
	inherited                                uint8  // inhPhase... : taken from an earlier line
	status                                   uint8  // index into statusNames
	line                                     int
	first                                    int // the line of the seq's first valid line
	task, inputChars, outputChars, toolCalls int
	replayOf                                 int
	duration                                 float64
	refs                                     [nTexts]textRef
}

// textRef is the span of one text field in rec.text.
type textRef struct{ off, n uint32 }

// The text fields of a rec, in the order of refs.
const (
	tFile = iota
	tRole
	tPhase
	tSummary
	tTier
	tSession
	tMutation
	nTexts
)

// Bits of rec.has: the nullable field holds a value.
const (
	hPhase uint16 = 1 << iota
	hSummary
	hTier
	hSession
	hMutation
	hTask
	hDuration
	hInput
	hOutput
	hToolCalls
	hReplayOf
)

// Bits of rec.inherited, in the order Entry.Inherited names them.
const (
	inhPhase uint8 = 1 << iota
	inhTask
	inhRole
	inhFile
)

// statusNames maps rec.status to the Status; 0 is no status.
var statusNames = [...]Status{"", StatusDispatched, StatusCompleted, StatusFailed, StatusError, StatusSkipped, StatusReplayed}

// str returns text field t of r, whose text is text.
func (r *rec) str(text string, t int) string {
	ref := r.refs[t]
	return text[ref.off : ref.off+ref.n]
}

// inherit fills the context fields that the authoritative line r (its text: text)
// left null or empty from prev (prevText), the merged state of the earlier lines of
// the same seq (see Entry.Inherited), and returns r's text, new when it took some.
func (r *rec) inherit(text string, prev *rec, prevText string) string {
	r.inherited = 0
	if r.has&hPhase == 0 && prev.has&hPhase != 0 {
		r.inherited |= inhPhase
	}
	if r.has&hTask == 0 && prev.has&hTask != 0 {
		r.has |= hTask
		r.task = prev.task
		r.inherited |= inhTask
	}
	if r.refs[tRole].n == 0 && prev.refs[tRole].n != 0 {
		r.inherited |= inhRole
	}
	if r.refs[tFile].n == 0 && prev.refs[tFile].n != 0 {
		r.inherited |= inhFile
	}
	if r.inherited&^inhTask == 0 {
		return text
	}
	// Text is taken from prev: the record gets one new string holding both.
	buf := make([]byte, 0, len(text)+len(prev.str(prevText, tPhase))+len(prev.str(prevText, tRole))+len(prev.str(prevText, tFile)))
	buf = append(buf, text...)
	take := func(t int) {
		s := prev.str(prevText, t)
		r.refs[t] = textRef{off: uint32(len(buf)), n: uint32(len(s))}
		buf = append(buf, s...)
	}
	if r.inherited&inhPhase != 0 {
		take(tPhase)
		r.has |= hPhase
	}
	if r.inherited&inhRole != 0 {
		take(tRole)
	}
	if r.inherited&inhFile != 0 {
		take(tFile)
	}
	return string(buf)
}

// inheritedNames lists the inherited fields in the order Entry.Inherited has them.
func (r *rec) inheritedNames() []string {
	if r.inherited == 0 {
		return nil
	}
	var names []string
	for i, n := range [...]string{"phase", "task", "role", "file"} {
		if r.inherited&(1<<i) != 0 {
			names = append(names, n)
		}
	}
	return names
}

// slabs hand out the pointers of the entries built from records, from shared
// arrays, so a large manifest costs a few allocations per thousand entries instead
// of several per entry.
type slabs struct {
	ints   []int
	floats []float64
	strs   []string
}

// entrySlabs returns slabs for the pointers of one entry (at most five ints, one
// float and five strings: see entry), in one small allocation, for the parse of a
// single line. Should an entry need more, the slabs grow as usual.
func entrySlabs() *slabs {
	a := new(struct {
		ints   [5]int
		floats [1]float64
		strs   [5]string
	})
	return &slabs{ints: a.ints[:0], floats: a.floats[:0], strs: a.strs[:0]}
}

func (s *slabs) int(v int) *int {
	if len(s.ints) == cap(s.ints) {
		s.ints = make([]int, 0, 1024)
	}
	s.ints = append(s.ints, v)
	return &s.ints[len(s.ints)-1]
}

func (s *slabs) float(v float64) *float64 {
	if len(s.floats) == cap(s.floats) {
		s.floats = make([]float64, 0, 512)
	}
	s.floats = append(s.floats, v)
	return &s.floats[len(s.floats)-1]
}

func (s *slabs) str(v string) *string {
	if len(s.strs) == cap(s.strs) {
		s.strs = make([]string, 0, 1024)
	}
	s.strs = append(s.strs, v)
	return &s.strs[len(s.strs)-1]
}

// entry builds the Entry of r (its text and unknown keys: text, extra) into e, its
// pointers from s.
func (r *rec) entry(e *Entry, text string, extra map[string]json.RawMessage, s *slabs) {
	*e = Entry{Seq: int(r.seq), Line: r.line, FirstLine: r.first, Status: statusNames[r.status], File: r.str(text, tFile), Role: r.str(text, tRole),
		Extra: extra, Inherited: r.inheritedNames()}
	h := r.has
	if h&hPhase != 0 {
		e.Phase = s.str(r.str(text, tPhase))
	}
	if h&hTask != 0 {
		e.Task = s.int(r.task)
	}
	if h&hDuration != 0 {
		e.DurationS = s.float(r.duration)
	}
	if h&hSummary != 0 {
		e.Summary = s.str(r.str(text, tSummary))
	}
	if h&hInput != 0 {
		e.InputChars = s.int(r.inputChars)
	}
	if h&hOutput != 0 {
		e.OutputChars = s.int(r.outputChars)
	}
	if h&hTier != 0 {
		e.ModelTier = s.str(r.str(text, tTier))
	}
	if h&hToolCalls != 0 {
		e.ToolCalls = s.int(r.toolCalls)
	}
	if h&hReplayOf != 0 {
		e.ReplayOf = s.int(r.replayOf)
	}
	if h&hSession != 0 {
		e.ReplaySession = s.str(r.str(text, tSession))
	}
	if h&hMutation != 0 {
		e.Mutation = s.str(r.str(text, tMutation))
	}
}
