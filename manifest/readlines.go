package manifest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"io/fs"
	"runtime"
	"sync"
)

// The read is a small pipeline: one goroutine reads lines into batches, up to
// parseWorkers goroutines parse the batches, and the caller folds the parsed lines
// into the manifest in line order. Parsing is most of the work and needs nothing
// but the line, so it runs beside the folding on a second core.

// batchLines is the number of lines handed to a parser at once; batchBytes caps the
// text of one batch (a batch ends at whichever comes first).
const (
	batchLines = 512
	batchBytes = 256 << 10
)

// lineKind is what the reader made of one line.
type lineKind uint8

const (
	lineEntry   lineKind = iota // a valid entry
	lineBlank                   // only white space: neither an entry nor damage
	lineCorrupt                 // does not parse
	lineTooLong                 // longer than MaxReadLineBytes, skipped unread
)

// parsedLine is one line of a batch after parsing.
type parsedLine struct {
	no         int
	kind       lineKind
	terminated bool // the line ended with a newline
	binary     bool // the line holds NUL bytes
	seq        int  // for damaged lines: a seq scraped from the text
	seqOK      bool
	rec        rec
	text       string                     // the text fields of rec
	extra      map[string]json.RawMessage // unknown keys
	err        error
}

// lineBatch is a run of consecutive lines: their text (read by the reader, with
// offsets into buf) and, once done is closed, their parse results.
type lineBatch struct {
	buf   []byte
	ends  []int // end offset of each line in buf
	lines []parsedLine
	done  chan struct{}
	err   error // a read error after the last line of the batch
	errNo int   // the number of the line that could not be read
	free  chan *lineBatch
}

// newBatch returns a batch from free, or a new one when none is free. A read keeps
// its own free list, not a sync.Pool, which the GC empties: every batch made anew
// costs its buffers' page faults again.
//
// size is the stream's length when known (-1 otherwise): a batch of a stream
// shorter than a full batch is made at the size its text needs, since most
// manifests are a few kilobytes and a full batch is a third of a megabyte to
// clear. A stream that grows while it is read only makes the batch grow.
func newBatch(free chan *lineBatch, size int64) *lineBatch {
	var b *lineBatch
	select {
	case b = <-free:
	default:
		b = &lineBatch{free: free}
	}
	if b.lines == nil {
		// Made once at full size (a batch's text ends at most one longest line
		// past batchBytes): growing them line by line copied each batch's text
		// and parsed lines (entries with pointers) about ten times.
		lines, text := batchLines, batchBytes+MaxReadLineBytes
		if size >= 0 && size < int64(text) {
			// a manifest line is some hundred bytes: room for lines of 64
			text = int(size) + 1
			lines = min(lines, text/64+16)
		}
		b.lines = make([]parsedLine, 0, lines)
		b.ends = make([]int, 0, lines)
		b.buf = make([]byte, 0, text)
	}
	b.buf, b.ends, b.lines = b.buf[:0], b.ends[:0], b.lines[:0]
	b.done, b.err = make(chan struct{}), nil
	return b
}

// release returns a folded batch for reuse; nothing may point into it afterwards
// (parsed values are copies, never slices of buf).
func (b *lineBatch) release() {
	for i := range b.lines {
		b.lines[i] = parsedLine{}
	}
	select {
	case b.free <- b:
	default:
	}
}

// parseWorkers is how many goroutines parse batches.
func parseWorkers() int { return max(1, min(runtime.GOMAXPROCS(0), 4)) }

// readBatches reads r line by line and returns the batches in line order; each is
// parsed by a worker and ready to fold once its done channel is closed. Closing stop
// ends the reading early (the caller gave up); the returned channel is always closed.
func readBatches(r io.Reader, stop <-chan struct{}) <-chan *lineBatch {
	size := streamSize(r)
	ordered := make(chan *lineBatch, 2*parseWorkers())
	work := make(chan *lineBatch, parseWorkers())
	// Room for every batch that can be in flight: queued, parsed, folded, filled.
	free := make(chan *lineBatch, 4*parseWorkers()+2)
	var wg sync.WaitGroup
	for range parseWorkers() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var p lineParser
			for b := range work {
				b.parse(&p)
				close(b.done)
			}
		}()
	}
	go func() {
		defer close(ordered)
		defer func() { close(work); wg.Wait() }()
		br := bufio.NewReaderSize(r, MaxReadLineBytes)
		lineNo := 0
		for more := true; more; {
			b := newBatch(free, size)
			more = b.fill(br, &lineNo)
			select {
			case work <- b:
			case <-stop:
				return
			}
			select {
			case ordered <- b:
			case <-stop:
				return
			}
		}
	}()
	return ordered
}

// streamSize is the number of bytes left to read in r when r says (a file, a
// string or bytes reader), -1 otherwise.
func streamSize(r io.Reader) int64 {
	switch f := r.(type) {
	case interface{ Len() int }:
		return int64(f.Len())
	case interface{ Stat() fs.FileInfo }:
		if st := f.Stat(); st != nil && st.Mode().IsRegular() {
			return st.Size()
		}
	case interface{ Stat() (fs.FileInfo, error) }:
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			return st.Size()
		}
	}
	return -1
}

// fill reads lines into b until it is full or the stream ends; more is false at the
// end of the stream or after a read error (kept in b.err).
func (b *lineBatch) fill(br *bufio.Reader, lineNo *int) (more bool) {
	for len(b.lines) < batchLines && len(b.buf) < batchBytes {
		line, tooLong, eof, err := readLine(br)
		if err != nil {
			b.err, b.errNo = err, *lineNo+1
			return false
		}
		if eof && len(line) == 0 && !tooLong {
			return false
		}
		*lineNo++
		if *lineNo == 1 {
			line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
		}
		pl := parsedLine{no: *lineNo, terminated: !eof}
		if tooLong {
			pl.kind = lineTooLong
		}
		b.buf = append(b.buf, line...)
		b.ends = append(b.ends, len(b.buf))
		b.lines = append(b.lines, pl)
		if eof {
			return false
		}
	}
	return true
}

// parse parses every line of the batch with p.
func (b *lineBatch) parse(p *lineParser) {
	start := 0
	for i := range b.lines {
		pl := &b.lines[i]
		text := b.buf[start:b.ends[i]]
		start = b.ends[i]
		if pl.kind == lineTooLong {
			pl.binary = bytes.IndexByte(text, 0) >= 0
			pl.seq, pl.seqOK = scrapeSeq(text)
			continue
		}
		body := text
		for len(body) > 0 && (body[len(body)-1] == '\n' || body[len(body)-1] == '\r') {
			body = body[:len(body)-1]
		}
		if len(body) == 0 || body[0] != '{' && len(bytes.TrimSpace(body)) == 0 {
			pl.kind = lineBlank
			continue
		}
		err := p.parseRec(body, &pl.rec)
		if err == nil {
			pl.text, pl.extra = string(p.text), p.extra
		} else {
			pl.rec = rec{}
			pl.kind, pl.err = lineCorrupt, err
			pl.binary = bytes.IndexByte(body, 0) >= 0
			pl.seq, pl.seqOK = scrapeSeq(body)
			continue
		}
	}
}
