package cli

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/exitcode"
	"github.com/replaytool/replay/internal/testkit/testtools"
	"github.com/replaytool/replay/manifest"
)

// manifestFactory returns a factory with captured streams.
func manifestFactory(t *testing.T) (*Factory, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	ios, _, out, errOut := testtools.Streams()
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
	t.Parallel()
	f, out, errOut := manifestFactory(t)
	dir := dispatchDir(t)
	file := filepath.Join(dir, "11-build-implementer.md")
	require.NoError(t, os.WriteFile(file, []byte("héllo,\r\nwörld\n"), 0o644))

	err := manifestBeforeRun(&ManifestBeforeOptions{cmdBase: baseOf(f), Dir: dir, Seq: 11, File: file, Role: "build-implementer", Phase: new("3"), Task: new(1), ModelTier: new("opus")})
	require.NoError(t, err)
	err = manifestBeforeRun(&ManifestBeforeOptions{cmdBase: baseOf(f), Dir: dir, Seq: 12, File: "12-build-implementer.md", Role: "build-implementer", ModelTier: new("sonnet")})
	require.NoError(t, err)
	sum, oc, tc, dur := strings.Repeat("x", 5000), 4870, 27, 388
	err = manifestAfterRun(&ManifestAfterOptions{cmdBase: baseOf(f), Dir: dir, Seq: 11, Status: "completed", Summary: &sum, OutputChars: &oc, ToolCalls: &tc, Duration: &dur})
	require.NoError(t, err)
	assert.Equal(t, "dispatched seq 11 (11-build-implementer.md, 13 chars)\ndispatched seq 12 (12-build-implementer.md, None chars)\ncompleted seq 11 (11-build-implementer.md)\n", out.String())
	assert.Equal(t, "[dispatch WARN] cannot read dispatch file 12-build-implementer.md: [Errno 2] No such file or directory: '12-build-implementer.md'; input_chars set to null\n", errOut.String(),
		"a relative file is looked up in the working directory, not in --dir")

	data, err := os.ReadFile(filepath.Join(dir, manifest.ManifestFile))
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	require.Len(t, lines, 3)
	assert.Equal(t, `{"seq":11,"file":"11-build-implementer.md","role":"build-implementer","phase":"3","task":1,"status":"dispatched","duration_s":null,"summary":null,"input_chars":13,"output_chars":null,"model_tier":"opus","model_profile":"high","tool_calls":null}`, lines[0])
	assert.Equal(t, `{"seq":12,"file":"12-build-implementer.md","role":"build-implementer","phase":null,"task":null,"status":"dispatched","duration_s":null,"summary":null,"input_chars":null,"output_chars":null,"model_tier":"sonnet","model_profile":"standard","tool_calls":null}`, lines[1])
	assert.Equal(t, manifest.MaxLineBytes, len(lines[2])+1)
	head := `{"seq":11,"file":"11-build-implementer.md","role":"build-implementer","phase":"3","task":1,"status":"completed","duration_s":388,"summary":"`
	tail := `...","input_chars":13,"output_chars":4870,"model_tier":"opus","model_profile":"high","actual_model":null,"tool_calls":27}`
	kept := manifest.MaxLineBytes - 1 - len(head) - len(tail)
	assert.Equal(t, head+strings.Repeat("x", kept)+tail, lines[2], "the longest summary that fits, then ...")
}

func TestManifestAfterRefuses(t *testing.T) {
	t.Parallel()
	dir := dispatchDir(t)
	f, _, _ := manifestFactory(t)
	require.NoError(t, manifestBeforeRun(&ManifestBeforeOptions{cmdBase: baseOf(f), Dir: dir, Seq: 1, File: "1-x.md", Role: "r", ModelTier: new("opus")}))
	empty := dispatchDir(t)
	const badStatus = "dispatch after: status must be one of ['completed', 'error', 'failed', 'replayed', 'skipped']"
	tests := []struct {
		name string
		opts ManifestAfterOptions
		code int
		want string
	}{
		{name: "status dispatched", opts: ManifestAfterOptions{Dir: dir, Seq: 1, Status: "dispatched"}, code: exitcode.Usage, want: badStatus},
		{name: "unknown status", opts: ManifestAfterOptions{Dir: dir, Seq: 1, Status: "done"}, code: exitcode.Usage, want: badStatus},
		{name: "seq never dispatched", opts: ManifestAfterOptions{Dir: dir, Seq: 2, Status: "completed"}, code: exitcode.Failure,
			want: "dispatch after: no dispatched entry for seq 2 — refusing to fabricate a completion record"},
		{name: "no manifest", opts: ManifestAfterOptions{Dir: empty, Seq: 1, Status: "completed"}, code: exitcode.Failure,
			want: "dispatch after: no dispatched entry for seq 1 — refusing to fabricate a completion record"},
		{name: "no dir", opts: ManifestAfterOptions{Dir: filepath.Join(empty, "nope"), Seq: 1, Status: "completed"}, code: exitcode.Failure,
			want: "dispatch after: no dispatched entry for seq 1 — refusing to fabricate a completion record"},
		{name: "negative duration", opts: ManifestAfterOptions{Dir: dir, Seq: 1, Status: "completed", Duration: new(-1)}, code: exitcode.Usage, want: "--duration -1"},
		{name: "negative seq", opts: ManifestAfterOptions{Dir: dir, Seq: -1, Status: "completed"}, code: exitcode.Usage, want: "--seq -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _, _ := manifestFactory(t)
			tt.opts.cmdBase = baseOf(f)
			before, _ := os.ReadFile(filepath.Join(dir, manifest.ManifestFile))
			err := manifestAfterRun(&tt.opts)
			require.Error(t, err)
			var se *scriptError
			if errors.As(err, &se) {
				assert.Equal(t, tt.code, se.ExitCode())
				assert.Equal(t, tt.want, err.Error())
			} else {
				assert.Equal(t, tt.code, exitCodeOf(err))
				assert.Contains(t, err.Error(), tt.want)
			}
			after, _ := os.ReadFile(filepath.Join(dir, manifest.ManifestFile))
			assert.Equal(t, string(before), string(after), "nothing written")
		})
	}
}

func TestManifestBeforeRefuses(t *testing.T) {
	t.Parallel()
	dir := dispatchDir(t)
	f, _, errOut := manifestFactory(t)
	err := manifestBeforeRun(&ManifestBeforeOptions{cmdBase: baseOf(f), Dir: dir, Seq: 1, File: "/nonexistent", Role: "r", ModelTier: new("fable")})
	require.NoError(t, err, "a label replay does not know is recorded, not refused (newer Crucible)")
	assert.Equal(t, "[dispatch WARN] cannot read dispatch file /nonexistent: [Errno 2] No such file or directory: '/nonexistent'; input_chars set to null\n", errOut.String())
	data, err := os.ReadFile(filepath.Join(dir, manifest.ManifestFile))
	require.NoError(t, err)
	assert.Contains(t, string(data), `"model_tier":"fable","model_profile":null,"tool_calls":null}`)
	other := dispatchDir(t)
	err = manifestBeforeRun(&ManifestBeforeOptions{cmdBase: baseOf(f), Dir: other, Seq: -3, File: "x.md", Role: "r", ModelTier: new("opus")})
	assert.Equal(t, exitcode.Usage, exitCodeOf(err))
	assert.NoFileExists(t, filepath.Join(other, manifest.ManifestFile))
}

func TestManifestSeq(t *testing.T) {
	t.Parallel()
	dir := dispatchDir(t)
	f, out, _ := manifestFactory(t)
	for _, step := range []struct {
		seq    int
		status string
	}{{9, "dispatched"}, {10, "dispatched"}, {10, "completed"}, {9, "completed"}} {
		if step.status == "dispatched" {
			require.NoError(t, manifestBeforeRun(&ManifestBeforeOptions{cmdBase: baseOf(f), Dir: dir, Seq: step.seq, File: "x.md", Role: "r", ModelTier: new("opus")}))
		} else {
			require.NoError(t, manifestAfterRun(&ManifestAfterOptions{cmdBase: baseOf(f), Dir: dir, Seq: step.seq, Status: step.status}))
		}
	}
	out.Reset()
	require.NoError(t, manifestSeqRun(&ManifestSeqOptions{cmdBase: baseOf(f), Dir: dir}))
	assert.Equal(t, "11\n", out.String(), "one above every seq used, not the last line's seq + 1")

	jsonOpts := &ManifestSeqOptions{cmdBase: baseOf(f), Dir: dir}
	jsonOpts.Global.JSON = true
	out.Reset()
	require.NoError(t, manifestSeqRun(jsonOpts))
	assert.JSONEq(t, `{"next_seq":11}`, out.String())

	require.NoError(t, os.WriteFile(filepath.Join(dir, manifest.ManifestFile), []byte("{}\njunk\n{}\n{\"seq\":3,\"st"), 0o644))
	err := manifestSeqRun(jsonOpts)
	var se *scriptError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, exitcode.Failure, se.ExitCode())
	assert.Equal(t, "dispatch seq: 1 interior corrupt line(s) in manifest.jsonl — seq recovery unsafe, refusing to allocate (line 2 names no seq; run 'replay manifest repair --dir "+dir+"' to move it to a sidecar)", se.Error())
}

func TestManifestCleanup(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	live := filepath.Join(root, "tmp", "crucible-dispatch-1775430161")
	scratch := filepath.Join(root, "scratch")
	require.NoError(t, os.MkdirAll(live, 0o755))
	f, out, _ := manifestFactory(t)
	require.NoError(t, manifestBeforeRun(&ManifestBeforeOptions{cmdBase: baseOf(f), Dir: live, Seq: 1, File: "1-x.md", Role: "r", ModelTier: new("opus")}))
	require.NoError(t, os.WriteFile(filepath.Join(live, "1-x.md"), []byte("# Dispatch: x\n"), 0o644))

	out.Reset()
	err := manifestCleanupRun(&ManifestCleanupOptions{cmdBase: baseOf(f), Dir: live, Scratch: scratch})
	var se *scriptError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "dispatch cleanup: both manifest.jsonl and receipt-ledger.jsonl must exist before deleting the dispatch dir (refusing)", se.Error())
	assert.DirExists(t, live)

	require.NoError(t, manifestCleanupRun(&ManifestCleanupOptions{cmdBase: baseOf(f), Dir: live, Scratch: scratch, Failed: true}))
	dest := filepath.Join(scratch, "crucible-dispatch-1775430161")
	assert.Equal(t, "copied dispatch dir to "+dest+" (left /tmp in place)\n", out.String())
	assert.DirExists(t, live)
	assert.FileExists(t, filepath.Join(dest, "1-x.md"))

	require.NoError(t, os.WriteFile(filepath.Join(live, manifest.ReceiptLedgerFile), []byte("{}\n"), 0o644))
	out.Reset()
	require.NoError(t, manifestCleanupRun(&ManifestCleanupOptions{cmdBase: baseOf(f), Dir: live, Scratch: scratch}))
	assert.Equal(t, "copied manifest.jsonl + receipt-ledger.jsonl to "+dest+"; deleted "+live+"\n", out.String())
	assert.NoDirExists(t, live)

	err = manifestCleanupRun(&ManifestCleanupOptions{cmdBase: baseOf(f), Dir: live, Scratch: scratch})
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "dispatch cleanup: dispatch dir missing: "+live, se.Error())
	assert.FileExists(t, filepath.Join(dest, manifest.ReceiptLedgerFile), "a second call is harmless")
}

func TestManifestFlagParsing(t *testing.T) {
	t.Parallel()
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
		{name: "all flags, integers read like Python's int()", args: []string{"--dir", "d", "--seq", " +3 ", "--status", "completed", "--summary", "", "--output-chars", "1_0", "--tool-calls", "٢", "--duration", "-0"},
			check: func(t *testing.T, o *ManifestAfterOptions) {
				assert.Equal(t, 3, o.Seq)
				require.NotNil(t, o.Summary)
				assert.Equal(t, "", *o.Summary)
				assert.Equal(t, 10, *o.OutputChars)
				assert.Equal(t, 2, *o.ToolCalls)
				assert.Equal(t, 0, *o.Duration)
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

func TestPyIntRefuses(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"1.5", "", " ", "1__0", "_1", "1_", "0x10", "1e3", "--1", "one", "99999999999999999999"} {
		_, err := parsePyInt(s)
		assert.Error(t, err, "%q", s)
	}
	_, err := parsePyInt("1.5")
	assert.EqualError(t, err, "invalid int value: '1.5'")
	for s, want := range map[string]int64{"007": 7, "-2": -2, "\t9\n": 9, "１２": 12, "𝟗": 9} {
		got, err := parsePyInt(s)
		require.NoError(t, err, "%q", s)
		assert.Equal(t, want, got, "%q", s)
	}
}

// FuzzParsePyInt checks the Python-style integer reader never panics and agrees
// with strconv on plain decimal numbers.
func FuzzParsePyInt(f *testing.F) {
	for _, s := range []string{"1", " +3 ", "1_000", "-0", "1.5", "٣", "𝟗", "", "1__0", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := parsePyInt(s)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error for %q", s)
			}
			return
		}
		if got > maxPyInt || got < -maxPyInt {
			t.Fatalf("%q gave %d, out of range", s, got)
		}
		if n, perr := strconv.ParseInt(s, 10, 64); perr == nil && n != got {
			t.Fatalf("%q: got %d, strconv says %d", s, got, n)
		}
	})
}

func TestManifestFlagPrefixes(t *testing.T) {
	t.Parallel()
	f, _, _ := manifestFactory(t)
	var got *ManifestBeforeOptions
	cmd := NewCmdManifestBefore(f, func(o *ManifestBeforeOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--di", "d", "--se", "4", "--fi", "x.md", "--ro", "r", "--model", "opus", "--ph", "2", "--t", "3"})
	require.NoError(t, cmd.Execute())
	require.NotNil(t, got)
	assert.Equal(t, "d", got.Dir)
	assert.Equal(t, 4, got.Seq)
	assert.Equal(t, "opus", *got.ModelTier)
	assert.Equal(t, "2", *got.Phase)
	assert.Equal(t, 3, *got.Task)

	// --d could be --dir or --duration: ambiguous, as argparse says too.
	after := NewCmdManifestAfter(f, func(*ManifestAfterOptions) error { return nil })
	after.SetArgs([]string{"--d", "d", "--seq", "1", "--status", "completed"})
	after.SetOut(&strings.Builder{})
	after.SetErr(&strings.Builder{})
	err := after.Execute()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "unknown flag: --d")
}

// The bookkeeping commands that write (before, after, repair, cleanup) refuse a
// --dir that is a symbolic link, or that lies under ~/.claude/projects behind one,
// through the doors resume and A/B replays use: nothing is written where the link
// leads. The directory it leads to, given as --dir, is written.
func TestManifestWritersRefuseALinkedDispatchDir(t *testing.T) {
	t.Parallel()
	f, _, _ := manifestFactory(t)
	root := t.TempDir()
	home := filepath.Join(root, "home")
	f.Getenv = func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}
	elsewhere := filepath.Join(root, "elsewhere")
	require.NoError(t, os.MkdirAll(elsewhere, 0o755))
	line := `{"seq":1,"file":"1-a.md","role":"a","phase":null,"task":null,"status":"dispatched","duration_s":null,"summary":null,"input_chars":null,"output_chars":null,"model_tier":null,"model_profile":null,"tool_calls":null}` + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(elsewhere, manifest.ManifestFile), []byte(line+"junk\n"+line), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(elsewhere, manifest.ReceiptLedgerFile), nil, 0o644))
	live := filepath.Join(root, "tmp", "crucible-dispatch-1775430161")
	require.NoError(t, os.MkdirAll(filepath.Dir(live), 0o755))
	require.NoError(t, os.Symlink(elsewhere, live))
	// A durable copy in a scratch dir whose memory folder is a link.
	memory := filepath.Join(home, ".claude", "projects", "0123456789abcdef", "memory")
	require.NoError(t, os.MkdirAll(filepath.Dir(memory), 0o755))
	require.NoError(t, os.Symlink(root, memory))
	durable := filepath.Join(memory, "elsewhere")
	scratch := filepath.Join(root, "scratch")

	for _, dir := range []string{live, live + "/", durable} {
		writers := map[string]func() error{
			"before": func() error {
				return manifestBeforeRun(&ManifestBeforeOptions{cmdBase: baseOf(f), Dir: dir, Seq: 2, File: "2-a.md", Role: "a", Convention: "auto"})
			},
			"after": func() error {
				return manifestAfterRun(&ManifestAfterOptions{cmdBase: baseOf(f), Dir: dir, Seq: 1, Status: "completed", Convention: "auto"})
			},
			"repair": func() error { return manifestRepairRun(&ManifestRepairOptions{cmdBase: baseOf(f), Dir: dir}) },
			"cleanup": func() error {
				return manifestCleanupRun(&ManifestCleanupOptions{cmdBase: baseOf(f), Dir: dir, Scratch: scratch, Failed: true})
			},
		}
		for name, run := range writers {
			before := treeOf(t, root)
			err := run()
			require.Error(t, err, "%s --dir %s", name, dir)
			assert.Contains(t, err.Error(), "symbolic link", name)
			assert.Equal(t, before, treeOf(t, root), "%s --dir %s: nothing written", name, dir)
		}
	}
	// A scratch dir behind the linked memory folder is refused too.
	err := manifestCleanupRun(&ManifestCleanupOptions{cmdBase: baseOf(f), Dir: elsewhere, Scratch: memory, Failed: true})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "symbolic link")

	require.NoError(t, manifestBeforeRun(&ManifestBeforeOptions{cmdBase: baseOf(f), Dir: elsewhere, Seq: 2, File: "2-a.md", Role: "a", Convention: "auto"}), "the directory the link leads to is written")
	require.NoError(t, manifestCleanupRun(&ManifestCleanupOptions{cmdBase: baseOf(f), Dir: elsewhere, Scratch: scratch, Failed: true}))
}

// treeOf maps every path under root (links not followed) to its size and mode.
func treeOf(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		out[path] = info.Mode().String() + " " + strconv.FormatInt(info.Size(), 10)
		return nil
	}))
	return out
}
