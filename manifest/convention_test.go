package manifest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDetectConvention(t *testing.T) {
	t.Parallel()
	older := `{"seq":1,"file":"1-a.md","role":"a","phase":null,"task":null,"status":"dispatched","duration_s":null,"summary":null,"input_chars":1,"output_chars":null,"model_tier":"opus","tool_calls":null}`
	newer := `{"seq":1,"file":"1-a.md","role":"a","phase":null,"task":null,"status":"dispatched","duration_s":null,"summary":null,"input_chars":1,"output_chars":null,"model_tier":"opus","model_profile":"high","tool_calls":null}`
	tests := []struct {
		name, content string
		want          Convention
	}{
		{"no manifest", "", ConventionNewer},
		{"empty", "\n\n", ConventionNewer},
		{"older first line", older + "\n" + newer + "\n", ConventionOlder},
		{"newer first line", newer + "\n" + older + "\n", ConventionNewer},
		{"corrupt lines skipped", "{torn\n[1,2]\n{\"x\":1}\n" + older + "\n", ConventionOlder},
		{"model_profile only in a summary", strings.Replace(older, `"summary":null`, `"summary":"\"model_profile\": x"`, 1) + "\n", ConventionOlder},
		{"only a torn line", `{"seq":1,"model_pro`, ConventionNewer},
	}
	for _, tt := range tests {
		dir := t.TempDir()
		path := filepath.Join(dir, ManifestFile)
		if tt.name != "no manifest" {
			require.NoError(t, os.WriteFile(path, []byte(tt.content), 0o644))
		}
		got, err := DetectConvention(path)
		require.NoError(t, err, tt.name)
		assert.Equal(t, tt.want, got, tt.name)
	}
}

// TestAppendFollowsTheConvention appends the same entry to an older and a newer
// manifest and through AppendNext: the older gets no model_profile/actual_model.
func TestAppendFollowsTheConvention(t *testing.T) {
	t.Parallel()
	tier := "opus"
	e := Entry{Seq: 2, File: "2-a.md", Role: "a", Status: StatusDispatched, ModelTier: &tier,
		Extra: map[string]json.RawMessage{KeyModelProfile: json.RawMessage(`"high"`), KeyActualModel: json.RawMessage(`null`)}}
	for _, first := range []string{"older", "newer"} {
		dir := t.TempDir()
		path := filepath.Join(dir, ManifestFile)
		line := `{"seq":1,"file":"1-a.md","role":"a","phase":null,"task":null,"status":"completed","duration_s":1,"summary":null,"input_chars":1,"output_chars":null,"model_tier":"opus","tool_calls":null}`
		if first == "newer" {
			line = strings.Replace(line, `"model_tier":"opus"`, `"model_tier":"opus","model_profile":"high","actual_model":null`, 1)
		}
		require.NoError(t, os.WriteFile(path, []byte(line+"\n"), 0o644))
		_, err := AppendEntry(path, e)
		require.NoError(t, err)
		_, err = AppendNext(path, func(seq int) (Entry, error) { n := e; n.Seq = seq; return n, nil })
		require.NoError(t, err)
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		require.Len(t, lines, 3)
		for _, l := range lines[1:] {
			if first == "older" {
				assert.NotContains(t, l, "model_profile", first)
				assert.NotContains(t, l, "actual_model", first)
				assert.Contains(t, l, `"model_tier":"opus","tool_calls":null}`, first)
			} else {
				assert.Contains(t, l, `"model_tier":"opus","model_profile":"high","actual_model":null,"tool_calls":null}`, first)
			}
		}
	}
}

// FuzzConventionOf: any manifest head gives a convention without a panic, and the
// same one for the same bytes.
func FuzzConventionOf(f *testing.F) {
	f.Add([]byte(`{"seq":1,"model_tier":"opus"}` + "\n"))
	f.Add([]byte(`{"seq":1,"model_tier":"opus","model_profile":"high"}` + "\n"))
	f.Add([]byte("{torn\n\n{\"seq\":2}"))
	f.Fuzz(func(t *testing.T, head []byte) {
		a, err := conventionOf(bytes.NewReader(head))
		require.NoError(t, err)
		b, _ := conventionOf(bytes.NewReader(head))
		assert.Equal(t, a, b)
		assert.Contains(t, []Convention{ConventionOlder, ConventionNewer}, a)
	})
}
