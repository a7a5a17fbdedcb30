package manifest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"strings"

	"github.com/replaytool/replay/internal/runfile"
)

// ReceiptLedgerFile is the name of the receipt ledger in a dispatch directory.
const ReceiptLedgerFile = "receipt-ledger.jsonl"

// DispatchActivePrefix starts the name of a scratch dir's .dispatch-active-<sid> files.
const DispatchActivePrefix = ".dispatch-active-"

// Receipt is one line of receipt-ledger.jsonl: evidence that a dispatch produced output.
type Receipt struct {
	DispatchID string `json:"dispatch_id"`
	Phase      string `json:"phase"`
	RcptSHA256 string `json:"rcpt_sha256"`
	Verdict    string `json:"verdict"`
}

// ReadReceipts reads a receipt ledger tolerantly: a corrupt line becomes a warning.
// A missing ledger is no receipts and no error.
func ReadReceipts(path string) ([]Receipt, []Warning, error) {
	f, err := runfile.Open(path, runfile.ReceiptLedger)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if errors.Is(err, runfile.ErrNotRegular) || errors.Is(err, runfile.ErrTooLarge) {
		return nil, nil, err
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: cannot open the receipt ledger: %w", path, err)
	}
	defer f.Close()
	return ParseReceipts(f, path)
}

// ParseReceipts reads a receipt ledger stream tolerantly: a corrupt or overlong line
// becomes a warning; only a read error fails. name is used in messages.
func ParseReceipts(r io.Reader, name string) ([]Receipt, []Warning, error) {
	var out []Receipt
	var warns []Warning
	br := bufio.NewReaderSize(r, MaxReadLineBytes)
	for n := 1; ; n++ {
		line, tooLong, eof, err := readLine(br)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: line %d: cannot read: %w", name, n, err)
		}
		if tooLong {
			warns = appendWarning(warns, n, "longer than 64 KiB; skipped")
		} else if text := bytes.TrimSpace(line); len(text) > 0 {
			r, err := parseReceipt(text)
			if err != nil {
				warns = appendWarning(warns, n, "corrupt receipt skipped: "+err.Error())
			} else {
				out = append(out, r)
			}
		}
		if eof {
			break
		}
	}
	return out, warns, nil
}

func appendWarning(ws []Warning, line int, text string) []Warning {
	if len(ws) >= maxCorruptWarnings {
		return ws
	}
	return append(ws, Warning{Line: line, Text: text})
}

func parseReceipt(text []byte) (Receipt, error) {
	if r, ok := parseFlatReceipt(text); ok {
		return r, nil
	}
	return parseReceiptJSON(text)
}

// parseReceiptJSON is parseReceipt through encoding/json, for any line.
func parseReceiptJSON(text []byte) (Receipt, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(text, &raw); err != nil {
		return Receipt{}, fmt.Errorf("not a JSON object")
	}
	var r Receipt
	for key, dst := range map[string]*string{"dispatch_id": &r.DispatchID, "phase": &r.Phase, "rcpt_sha256": &r.RcptSHA256, "verdict": &r.Verdict} {
		v, ok := raw[key]
		if !ok {
			continue
		}
		s, err := scalarString(v)
		if err != nil {
			return Receipt{}, fmt.Errorf("%q: %v", key, err)
		}
		*dst = s
	}
	if r.DispatchID == "" {
		return Receipt{}, fmt.Errorf("no \"dispatch_id\"")
	}
	return r, nil
}

// Seq returns the <N> of the receipt's "<N>-<template>" dispatch id.
func (r Receipt) Seq() (int, bool) { return seqPrefix(r.DispatchID) }

// ReadDispatchActive returns the session ids named by the .dispatch-active-<sid> files
// of a scratch directory, sorted; archived ones (".archived-<session>" appended by a
// fresh start) are left out. A missing directory has none.
func ReadDispatchActive(scratch string) ([]string, error) {
	entries, err := os.ReadDir(scratch)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: cannot list the scratch directory: %w", scratch, err)
	}
	var sids []string
	for _, d := range entries {
		if sid, ok := strings.CutPrefix(d.Name(), DispatchActivePrefix); ok && sid != "" && !strings.Contains(sid, ".archived-") {
			sids = append(sids, sid)
		}
	}
	sort.Strings(sids)
	return sids, nil
}

// parseFlatReceipt reads the usual receipt line, a flat JSON object whose keys and
// values are all plain strings (printable ASCII, no escapes), as parseReceipt would
// but without building a map of raw values for each line; ok is false for any other
// line (it may still be valid: parseReceipt reads it through encoding/json) and for
// a line without a dispatch_id (parseReceipt says why).
func parseFlatReceipt(text []byte) (r Receipt, ok bool) {
	i := skipJSONSpace(text, 0)
	if i >= len(text) || text[i] != '{' {
		return Receipt{}, false
	}
	for i++; ; i++ {
		key, j, ok := plainJSONString(text, skipJSONSpace(text, i))
		if !ok {
			return Receipt{}, false
		}
		if j = skipJSONSpace(text, j); j >= len(text) || text[j] != ':' {
			return Receipt{}, false
		}
		val, j, ok := plainJSONString(text, skipJSONSpace(text, j+1))
		if !ok {
			return Receipt{}, false
		}
		switch string(key) { // a repeated key: the last one counts, as in encoding/json
		case "dispatch_id":
			r.DispatchID = string(val)
		case "phase":
			r.Phase = string(val)
		case "rcpt_sha256":
			r.RcptSHA256 = string(val)
		case "verdict":
			r.Verdict = string(val)
		}
		if i = skipJSONSpace(text, j); i < len(text) && text[i] == ',' {
			continue
		}
		if i >= len(text) || text[i] != '}' || skipJSONSpace(text, i+1) != len(text) {
			return Receipt{}, false
		}
		return r, r.DispatchID != ""
	}
}

// plainJSONString returns the content of the JSON string starting at text[i] when
// it holds only printable ASCII and no escape, and the index after its closing quote.
func plainJSONString(text []byte, i int) (s []byte, end int, ok bool) {
	if i >= len(text) || text[i] != '"' {
		return nil, 0, false
	}
	for j := i + 1; j < len(text); j++ {
		switch c := text[j]; {
		case c == '"':
			return text[i+1 : j], j + 1, true
		case c == '\\' || c < 0x20 || c >= 0x7f:
			return nil, 0, false
		}
	}
	return nil, 0, false
}

// skipJSONSpace returns the index of the first byte at or after i that is not JSON
// white space.
func skipJSONSpace(text []byte, i int) int {
	for i < len(text) && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r') {
		i++
	}
	return i
}
