package agent

import (
	"testing"
	"time"

	"github.com/replaytool/replay/manifest"
)

// FuzzDecodeRecording checks that no recording file panics the decoder and that an
// accepted one has a final status and is marked reused under its key.
func FuzzDecodeRecording(f *testing.F) {
	key := "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	for _, s := range []string{
		`{"version":1,"key":"` + key + `","status":"completed","summary":"ok","output":"x"}`,
		`{"version":1,"key":"` + key + `","status":"failed","output_base64":"AAEC"}`,
		`{"version":1,"key":"` + key + `","status":"dispatched"}`,
		`{"key":"` + key + `","status":"completed","output_base64":"!!"}`,
		"\x00\x1b[31m",
	} {
		f.Add([]byte(s))
	}
	req := Request{Seq: 1, Template: "t", Now: func() time.Time { return time.Unix(0, 0) }}
	if v2, err := encodeRecording(key, req, Response{Status: manifest.StatusCompleted, Output: []byte("x"), Fingerprint: &Fingerprint{Template: "t"}}); err == nil {
		f.Add(v2)
		f.Add(v2[:len(v2)/2])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := decodeRecording(data, key)
		if err != nil {
			return
		}
		switch r.Status {
		case manifest.StatusCompleted, manifest.StatusFailed, manifest.StatusError:
		default:
			t.Fatalf("status %q accepted", r.Status)
		}
		if !r.Reused || r.Key != key {
			t.Fatalf("accepted recording not marked reused under its key: %+v", r)
		}
	})
}
