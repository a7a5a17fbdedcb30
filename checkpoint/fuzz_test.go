package checkpoint

import (
	"strings"
	"testing"
	"time"
)

func FuzzParseCheckpointManifest(f *testing.F) {
	for _, s := range []string{
		"| a1b2c3d4 | 2026-03-24 12:45:30 | pre-wave-3 | build |\n| e5f6a7b8 | 2026-03-24 12:30:15 | pre-plan-gate | build |\n",
		"# Checkpoint Manifest\n\n| Hash | Timestamp | Reason | Source |\n|------|-----------|--------|--------|\n| 0a10a10a | 2026-04-06 01:47:41 | pre-wave-10 | build |\n",
		"", "|", "| zz | x | y |", "|abcd|||", "| abcd | t | r | s | extra | cells |\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, r := range parseManifest(data) {
			if len(r.Hash) < 4 || !isHex(r.Hash) || r.Hash != strings.ToLower(r.Hash) {
				t.Fatalf("row hash %q is not lower-case hex of 4+ digits", r.Hash)
			}
			if r.Line < 1 || strings.Contains(r.Raw, "\n") {
				t.Fatalf("row %+v: bad line number or multi-line raw text", r)
			}
		}
	})
}

func FuzzParseSubjectTime(f *testing.F) {
	for _, s := range []string{"2026-04-07 16:00:00", "2026-04-07T14:00:00Z", "2026-04-07T16:00:00+02:00", "2026-04-07 16:00", "", "yesterday"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := parseTime(s)
		if !ok {
			return
		}
		if got.Location() != time.UTC {
			t.Fatalf("%q parsed to %v, not UTC", s, got)
		}
	})
}

// FuzzParseStatCache feeds damaged stat caches to the decoder: it never panics, and
// every record it keeps is found again by its path.
func FuzzParseStatCache(f *testing.F) {
	f.Add([]byte(cacheMagic + "\x00\x00"))
	f.Add([]byte(cacheMagic + "\x02\x02\x01a\xa4\x03\x02\x04aaaaaaaaaaaaaaaaaaaa\x01b\xa4\x03\x02\x04bbbbbbbbbbbbbbbbbbbb"))
	f.Add([]byte(cacheMagic + "\x02\x02\x01b\xa4\x03\x02\x04bbbbbbbbbbbbbbbbbbbb\x01a\xa4\x03\x02\x04aaaaaaaaaaaaaaaaaaaa"))
	f.Add([]byte(cacheMagic + "\x02\xff\xff\xff\xff\x0f"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c := parseCache(data)
		for i := range c.recs {
			name := string(c.name(i))
			r, ok := c.find(name)
			if !ok || string(c.data[r.off:r.end]) != name {
				t.Fatalf("record %d (%q) not found again", i, name)
			}
		}
		c.lookup("no/such/file", 0, 0, 0)
	})
}
