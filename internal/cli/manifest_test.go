package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/exitcode"
	"github.com/replaytool/replay/internal/iostreams"
	"github.com/replaytool/replay/manifest"
)

// manifestFactory returns a factory with captured streams.
func manifestFactory(t *testing.T) (*Factory, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	cwd := t.TempDir()
	f := &Factory{IOStreams: ios, Getenv: func(string) string { return "" }, Getwd: func() (string, error) { return cwd, nil }}
	return f, out, errOut
}

func dispatchDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "crucible-dispatch-1775430161")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	return dir
}

func TestManifestBeforeAfter(t *testing.T) {
	f, out, _ := manifestFactory(t)
	dir := dispatchDir(t)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "11-build-implementer.md"), []byte("héllo, wörld\n"), 0o644))

	err := manifestBeforeRun(&ManifestBeforeOptions{Factory: f, Dir: dir, Seq: 11, File: "11-build-implementer.md", Role: "build-implementer", Phase: "3", Task: "1", ModelTier: "opus"})
	require.NoError(t, err)
	err = manifestBeforeRun(&ManifestBeforeOptions{Factory: f, Dir: dir, Seq: 12, File: "12-build-implementer.md", Role: "build-implementer", ModelTier: "sonnet"})
	require.NoError(t, err)
	sum, oc, tc, dur := strings.Repeat("x", 5000), 4870, 27, 388.5
	err = manifestAfterRun(&ManifestAfterOptions{Factory: f, Dir: dir, Seq: 11, Status: "completed", Summary: &sum, OutputChars: &oc, ToolCalls: &tc, Duration: &dur})
	require.NoError(t, err)
	assert.Empty(t, out.String())

	data, err := os.ReadFile(filepath.Join(dir, manifest.ManifestFile))
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	require.Len(t, lines, 3)
	assert.Equal(t, `{"seq":11,"file":"11-build-implementer.md","role":"build-implementer","phase":"3","task":1,"status":"dispatched","duration_s":null,"summary":null,"input_chars":13,"output_chars":null,"model_tier":"opus","tool_calls":null}`, lines[0])
	assert.Equal(t, `{"seq":12,"file":"12-build-implementer.md","role":"build-implementer","phase":null,"task":null,"status":"dispatched","duration_s":null,"summary":null,"input_chars":null,"output_chars":null,"model_tier":"sonnet","tool_calls":null}`, lines[1])
	assert.LessOrEqual(t, len(lines[2])+1, manifest.MaxLineBytes)
	e, err := manifest.ParseLine([]byte(lines[2]))
	require.NoError(t, err)
	assert.Equal(t, manifest.StatusCompleted, e.Status)
	assert.Equal(t, "3", *e.Phase)
	assert.Equal(t, 1, *e.Task)
	assert.Equal(t, 13, *e.InputChars)
	assert.Equal(t, "opus", *e.ModelTier)
	assert.Equal(t, 388.5, *e.DurationS)
	assert.True(t, strings.HasSuffix(*e.Summary, "..."))
}

func TestManifestAfterRefuses(t *testing.T) {
	dir := dispatchDir(t)
	f, _, _ := manifestFactory(t)
	require.NoError(t, manifestBeforeRun(&ManifestBeforeOptions{Factory: f, Dir: dir, Seq: 1, File: "1-x.md", Role: "r", ModelTier: "opus"}))
	empty := dispatchDir(t)
	tests := []struct {
		name string
		opts ManifestAfterOptions
		want string
	}{
		{name: "status dispatched", opts: ManifestAfterOptions{Dir: dir, Seq: 1, Status: "dispatched"}, want: "--status dispatched"},
		{name: "unknown status", opts: ManifestAfterOptions{Dir: dir, Seq: 1, Status: "done"}, want: `--status "done"`},
		{name: "seq never dispatched", opts: ManifestAfterOptions{Dir: dir, Seq: 2, Status: "completed"}, want: "seq 2 has no dispatched entry"},
		{name: "no manifest", opts: ManifestAfterOptions{Dir: empty, Seq: 1, Status: "completed"}, want: "no manifest"},
		{name: "no dir", opts: ManifestAfterOptions{Dir: filepath.Join(empty, "nope"), Seq: 1, Status: "completed"}, want: "no such directory"},
		{name: "negative duration", opts: ManifestAfterOptions{Dir: dir, Seq: 1, Status: "completed", Duration: new(-1.0)}, want: "--duration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _, _ := manifestFactory(t)
			tt.opts.Factory = f
			before, _ := os.ReadFile(filepath.Join(dir, manifest.ManifestFile))
			err := manifestAfterRun(&tt.opts)
			require.Error(t, err)
			assert.Equal(t, exitcode.Usage, exitcode.Of(err))
			assert.Contains(t, err.Error(), tt.want)
			after, _ := os.ReadFile(filepath.Join(dir, manifest.ManifestFile))
			assert.Equal(t, string(before), string(after), "nothing written")
		})
	}
}

func TestManifestBeforeRefusesEscapingFile(t *testing.T) {
	dir := dispatchDir(t)
	for _, file := range []string{"../../etc/passwd", "/etc/passwd", ""} {
		f, _, _ := manifestFactory(t)
		err := manifestBeforeRun(&ManifestBeforeOptions{Factory: f, Dir: dir, Seq: 1, File: file, Role: "r", ModelTier: "opus"})
		require.Error(t, err, file)
		assert.Equal(t, exitcode.Usage, exitcode.Of(err))
		assert.NoFileExists(t, filepath.Join(dir, manifest.ManifestFile))
	}
}

func TestManifestSeq(t *testing.T) {
	dir := dispatchDir(t)
	f, out, _ := manifestFactory(t)
	for _, step := range []struct {
		seq    int
		status string
	}{{9, "dispatched"}, {10, "dispatched"}, {10, "completed"}, {9, "completed"}} {
		if step.status == "dispatched" {
			require.NoError(t, manifestBeforeRun(&ManifestBeforeOptions{Factory: f, Dir: dir, Seq: step.seq, File: "x.md", Role: "r", ModelTier: "opus"}))
		} else {
			require.NoError(t, manifestAfterRun(&ManifestAfterOptions{Factory: f, Dir: dir, Seq: step.seq, Status: step.status}))
		}
	}
	require.NoError(t, manifestSeqRun(&ManifestSeqOptions{Factory: f, Dir: dir}))
	assert.Equal(t, "11\n", out.String())

	f.JSON = true
	out.Reset()
	require.NoError(t, manifestSeqRun(&ManifestSeqOptions{Factory: f, Dir: dir}))
	assert.JSONEq(t, `{"next_seq":11}`, out.String())
}

func TestManifestCleanup(t *testing.T) {
	root := t.TempDir()
	live := filepath.Join(root, "tmp", "crucible-dispatch-1775430161")
	scratch := filepath.Join(root, "scratch")
	require.NoError(t, os.MkdirAll(live, 0o755))
	require.NoError(t, os.MkdirAll(scratch, 0o755))
	f, out, _ := manifestFactory(t)
	require.NoError(t, manifestBeforeRun(&ManifestBeforeOptions{Factory: f, Dir: live, Seq: 1, File: "1-x.md", Role: "r", ModelTier: "opus"}))
	require.NoError(t, os.WriteFile(filepath.Join(live, "1-x.md"), []byte("# Dispatch: x\n"), 0o644))

	require.NoError(t, manifestCleanupRun(&ManifestCleanupOptions{Factory: f, Dir: live, Scratch: scratch}))
	dest := filepath.Join(scratch, "crucible-dispatch-1775430161")
	assert.Equal(t, "Copied manifest.jsonl to "+dest+"\nRemoved "+live+"\n", out.String())
	assert.NoDirExists(t, live)
	assert.FileExists(t, filepath.Join(dest, manifest.ManifestFile))
	assert.NoFileExists(t, filepath.Join(dest, "1-x.md"))
}

func TestManifestStats(t *testing.T) {
	dir := dispatchDir(t)
	require.NoError(t, os.WriteFile(filepath.Join(dir, manifest.ManifestFile), []byte(
		`{"seq":1,"status":"dispatched","phase":"1"}`+"\n"+`junk`+"\n"+`{"seq":1,"status":"completed","phase":null}`+"\n"+`{"seq":4,"file":"4-a`), 0o644))
	f, out, errOut := manifestFactory(t)
	f.JSON = true
	require.NoError(t, manifestStatsRun(&ManifestStatsOptions{Factory: f, Path: dir}))
	var got map[string]any
	require.NoError(t, json.Unmarshal(out.Bytes(), &got))
	assert.Equal(t, map[string]any{"manifest": filepath.Join(dir, manifest.ManifestFile), "lines": 4.0, "valid": 2.0, "corrupt": 2.0,
		"torn_tail": true, "torn_seq": 4.0, "entries": 1.0, "max_seq": 4.0, "next_seq": 5.0}, got)
	assert.Contains(t, errOut.String(), "line 2: corrupt line skipped")
	assert.Contains(t, errOut.String(), "line 3: seq 1 has no phase")
	assert.Contains(t, errOut.String(), "line 4: torn last line")
}

func TestManifestFlagParsing(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		check func(t *testing.T, o *ManifestAfterOptions)
	}{
		{name: "optional flags unset are null", args: []string{"--dir", "d", "--seq", "3", "--status", "failed"},
			check: func(t *testing.T, o *ManifestAfterOptions) {
				assert.Equal(t, 3, o.Seq)
				assert.Nil(t, o.Summary)
				assert.Nil(t, o.OutputChars)
				assert.Nil(t, o.ToolCalls)
				assert.Nil(t, o.Duration)
			}},
		{name: "all flags", args: []string{"--dir", "d", "--seq", "3", "--status", "completed", "--summary", "", "--output-chars", "10", "--tool-calls", "2", "--duration", "1.5"},
			check: func(t *testing.T, o *ManifestAfterOptions) {
				require.NotNil(t, o.Summary)
				assert.Equal(t, "", *o.Summary)
				assert.Equal(t, 10, *o.OutputChars)
				assert.Equal(t, 2, *o.ToolCalls)
				assert.Equal(t, 1.5, *o.Duration)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _, _ := manifestFactory(t)
			var got *ManifestAfterOptions
			cmd := NewCmdManifestAfter(f, func(o *ManifestAfterOptions) error { got = o; return nil })
			cmd.SetArgs(tt.args)
			require.NoError(t, cmd.Execute())
			require.NotNil(t, got)
			tt.check(t, got)
		})
	}

	f, _, _ := manifestFactory(t)
	cmd := NewCmdManifestBefore(f, func(*ManifestBeforeOptions) error { return nil })
	cmd.SetArgs([]string{"--dir", "d", "--seq", "1"})
	cmd.SetOut(&strings.Builder{})
	cmd.SetErr(&strings.Builder{})
	err := cmd.Execute()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "required flag")
}
