package agent

import (
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
	golden := filepath.Join("testdata", "recording.golden.json")
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
