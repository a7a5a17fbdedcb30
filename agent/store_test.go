package agent

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/manifest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func sampleResponse() Response {
	return Response{
		Status: manifest.StatusCompleted, Summary: "Task 3 done", Verdict: "PASS",
		Output: []byte("working\nSUMMARY: Task 3 done\n"), OutputChars: 28, DurationS: 1.5, Agent: "./my-agent.sh",
		Fingerprint: &Fingerprint{
			Template: "build-implementer", BodySHA256: sha256Hex([]byte("Implement task 3.\n")), Role: "implementer",
			ModelTier: "opus", Agent: "./my-agent.sh", InputTree: "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
		},
	}
}

func TestStoreRoundTrip(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		output []byte
	}{
		{"text", []byte("working\nSUMMARY: Task 3 done\n")},
		{"not utf-8", []byte("bin\xff\xfe\x00ary\n")},
		{"empty", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := newRequest(t, 21, "implementer", "build-implementer", intp(3), "Implement task 3.\n", false)
			store := OpenStore(req.DispatchDir)
			key := Key(req.Template, req.Body)
			in := sampleResponse()
			in.Output, in.Reason, in.Truncated = tt.output, "a note", true
			require.NoError(t, store.Save(key, req, in))

			got, ok, err := store.Lookup(key)
			require.NoError(t, err)
			require.True(t, ok)
			want := in
			want.Reused, want.Key, want.RecordedBy = true, key, "21-build-implementer"
			if len(want.Output) == 0 {
				want.Output = []byte{}
			}
			assert.Equal(t, want, *got)

			entries, err := os.ReadDir(store.Dir())
			require.NoError(t, err)
			require.Len(t, entries, 1, "no temp file left behind")
			assert.Equal(t, key+".json", entries[0].Name())
		})
	}
}

func TestStoreRecordingGolden(t *testing.T) {
	t.Parallel()
	req := newRequest(t, 21, "implementer", "build-implementer", intp(3), "Implement task 3.\n", false)
	store := OpenStore(req.DispatchDir)
	key := Key(req.Template, req.Body)
	require.NoError(t, store.Save(key, req, sampleResponse()))
	got, err := os.ReadFile(store.Path(key))
	require.NoError(t, err)
	golden := filepath.Join("testdata", "recording.v2.golden.json")
	if *update {
		require.NoError(t, os.WriteFile(golden, got, 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))
}

func TestStoreLookupMissAndFallback(t *testing.T) {
	t.Parallel()
	req := newRequest(t, 21, "implementer", "build-implementer", intp(3), "Implement task 3.\n", false)
	key := Key(req.Template, req.Body)
	durable := t.TempDir()
	require.NoError(t, OpenStore(durable).Save(key, req, sampleResponse()))

	store := OpenStore(req.DispatchDir)
	_, ok, err := store.Lookup(key)
	require.NoError(t, err)
	assert.False(t, ok)

	got, ok, err := store.Also(durable).Lookup(key)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, "Task 3 done", got.Summary)
	assert.Equal(t, filepath.Join(req.DispatchDir, "responses"), store.Dir(), "saves still go to the dispatch dir")
}

func TestStoreRejectsBadRecordings(t *testing.T) {
	t.Parallel()
	key := Key("build-implementer", []byte("x"))
	other := Key("build-implementer", []byte("y"))
	tests := []struct {
		name, content, want string
	}{
		{"not json", "{torn", "not a recorded response"},
		{"newer version", `{"version":3,"key":"` + key + `"}`, "newer than this replay reads"},
		{"v2 without envelope", `{"version":0,"payload":{}}`, "not a recording version"},
		{"wrong format", `{"format":"x","version":2,"key":"` + key + `","payload":{}}`, `field format: "x"`},
		{"v2 wrong key", `{"format":"replay-recording","version":2,"key":"` + other + `","payload":{}}`, "not the " + key},
		{"wrong key", `{"key":"` + other + `","status":"completed"}`, "not the " + key},
		{"bad status", `{"key":"` + key + `","status":"dispatched"}`, `field status: "dispatched"`},
		{"bad base64", `{"key":"` + key + `","status":"failed","output_base64":"!!"}`, "field output_base64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			store := OpenStore(dir)
			require.NoError(t, os.MkdirAll(store.Dir(), 0o755))
			require.NoError(t, os.WriteFile(store.Path(key), []byte(tt.content), 0o644))
			_, _, err := store.Lookup(key)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.Contains(t, err.Error(), store.Path(key))
			assert.Contains(t, err.Error(), "delete the file")
		})
	}
}

func TestStoreRejectsBadKeys(t *testing.T) {
	t.Parallel()
	store := OpenStore(t.TempDir())
	for _, key := range []string{"", "../../etc/passwd", strings.Repeat("A", 64), strings.Repeat("a", 63)} {
		_, _, err := store.Lookup(key)
		assert.Error(t, err, key)
		assert.Error(t, store.Save(key, Request{Seq: 1, Template: "t"}, Response{}), key)
	}
}

func TestStoreReadsVersion1(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("testdata", "recording.v1.json"))
	require.NoError(t, err)
	key := Key("build-implementer", []byte("Implement task 3.\n"))
	store := OpenStore(t.TempDir())
	require.NoError(t, os.MkdirAll(store.Dir(), 0o755))
	require.NoError(t, os.WriteFile(store.Path(key), data, 0o644))
	got, ok, err := store.Lookup(key)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, "Task 3 done", got.Summary)
	assert.Equal(t, "21-build-implementer", got.RecordedBy)
	assert.Nil(t, got.Fingerprint, "version 1 kept no fingerprint")
}

// savedRecording saves the sample response and returns its store, key and file bytes.
func savedRecording(t *testing.T) (*Store, string, []byte) {
	t.Helper()
	req := newRequest(t, 21, "implementer", "build-implementer", intp(3), "Implement task 3.\n", false)
	store := OpenStore(req.DispatchDir)
	key := Key(req.Template, req.Body)
	require.NoError(t, store.Save(key, req, sampleResponse()))
	data, err := os.ReadFile(store.Path(key))
	require.NoError(t, err)
	return store, key, data
}

func TestStoreIntegrity(t *testing.T) {
	t.Parallel()
	_, _, orig := savedRecording(t)
	tests := []struct {
		name   string
		change func([]byte) []byte
		want   string // "" means accepted
	}{
		{"untouched", func(b []byte) []byte { return b }, ""},
		{"re-indented", func(b []byte) []byte {
			var out bytes.Buffer
			require.NoError(t, json.Indent(&out, b, "", "\t"))
			return out.Bytes()
		}, ""},
		{"summary edited", func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"Task 3 done"`), []byte(`"Task 3 DONE"`), 1)
		}, "integrity check failed"},
		{"fingerprint edited", func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"opus"`), []byte(`"haiku"`), 1)
		}, "integrity check failed"},
		{"hash edited", func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"payload_sha256": "`), []byte(`"payload_sha256": "0`), 1)
		}, "integrity check failed"},
		{"truncated", func(b []byte) []byte { return b[:len(b)*2/3] }, "truncated or not JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			store, key, _ := savedRecording(t)
			require.NoError(t, os.WriteFile(store.Path(key), tt.change(append([]byte(nil), orig...)), 0o644))
			got, ok, err := store.Lookup(key)
			if tt.want == "" {
				require.NoError(t, err)
				require.True(t, ok)
				assert.Equal(t, "Task 3 done", got.Summary)
				assert.Equal(t, sampleResponse().Fingerprint, got.Fingerprint)
				return
			}
			require.Error(t, err)
			assert.Nil(t, got, "nothing of a refused recording is returned")
			assert.Contains(t, err.Error(), tt.want)
			assert.Contains(t, err.Error(), store.Path(key))
		})
	}
}

func TestStoreRefusesHugeRecording(t *testing.T) {
	t.Parallel()
	store, key, _ := savedRecording(t)
	// A sparse file past the recording limit: refused by size before it is parsed.
	require.NoError(t, os.Truncate(store.Path(key), 64<<20+1))
	got, _, err := store.Lookup(key)
	require.Error(t, err)
	assert.Nil(t, got)
	assert.Contains(t, err.Error(), store.Path(key))
	assert.Contains(t, err.Error(), "limit")
}
