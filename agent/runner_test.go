package agent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/manifest"
)

func TestKey(t *testing.T) {
	t.Parallel()
	k := Key("build-implementer", []byte("Implement task 3.\n"))
	assert.Len(t, k, 64)
	assert.Equal(t, k, Key("build-implementer", []byte("Implement task 3.\n")), "stable")
	// sha256 of "build-implementer\nImplement task 3.\n": pinned, since recordings outlive releases.
	assert.Equal(t, "aa5040ea021d746310cc37500cd97645ac25eb8cec997ef520f8bb5dbeb3353c", k)
	assert.NotEqual(t, k, Key("build-reviewer", []byte("Implement task 3.\n")), "the template name counts")
	assert.NotEqual(t, k, Key("build-implementer", []byte("Implement task 3!\n")), "the body counts")
	assert.NotEqual(t, Key("ab", []byte("c")), Key("a", []byte("bc")), "name and body are separated")
}

// countingScript is a command agent that appends a line to calls on every run.
func countingScript(calls, body string) string {
	return "echo call >> " + calls + "; " + body
}

func linesIn(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return 0
	}
	require.NoError(t, err)
	return strings.Count(string(data), "\n")
}

func TestRunnerRecordsThenReuses(t *testing.T) {
	t.Parallel()
	req := newRequest(t, 21, "implementer", "build-implementer", intp(3), "Implement task 3.\n", false)
	calls := filepath.Join(t.TempDir(), "calls")
	live, err := New(countingScript(calls, "echo working; echo 'SUMMARY: Task 3 done'"), Options{})
	require.NoError(t, err)
	store := OpenStore(req.DispatchDir)
	var n atomic.Int64
	r := &Runner{Agent: live, Store: store, Calls: &n}

	first, err := r.Run(context.Background(), req)
	require.NoError(t, err)
	assert.False(t, first.Reused)
	assert.Equal(t, Key(req.Template, req.Body), first.Key)
	assert.FileExists(t, filepath.Join(req.DispatchDir, "responses", first.Key+".json"))
	assert.Equal(t, int64(1), n.Load())

	second, err := r.Run(context.Background(), req)
	require.NoError(t, err)
	assert.True(t, second.Reused)
	assert.Equal(t, int64(1), n.Load(), "a hit calls nothing")
	assert.Equal(t, 1, linesIn(t, calls))
	assert.Equal(t, first.Status, second.Status)
	assert.Equal(t, first.Summary, second.Summary)
	assert.Equal(t, first.Output, second.Output)
	assert.Equal(t, first.OutputChars, second.OutputChars)
	assert.Equal(t, "21-build-implementer", second.RecordedBy)

	// The recorded agent answers from the same store without any call.
	offline, err := New(SpecRecorded, Options{Store: store})
	require.NoError(t, err)
	third, err := (&Runner{Agent: offline, Store: store, Calls: &n}).Run(context.Background(), req)
	require.NoError(t, err)
	assert.True(t, third.Reused)
	assert.Equal(t, first.Summary, third.Summary)
	assert.Equal(t, int64(1), n.Load())
	assert.Equal(t, 1, linesIn(t, calls))

	files, err := manifest.ReadDispatchDir(req.DispatchDir)
	require.NoError(t, err)
	assert.Len(t, files, 1, "recordings and logs are no numbered files")
}

func TestRunnerRecordedMiss(t *testing.T) {
	t.Parallel()
	req := newRequest(t, 21, "implementer", "build-implementer", intp(3), "Implement task 3.\n", false)
	store := OpenStore(req.DispatchDir)
	offline, err := New(SpecRecorded, Options{Store: store})
	require.NoError(t, err)
	var n atomic.Int64
	resp, err := (&Runner{Agent: offline, Store: store, Calls: &n}).Run(context.Background(), req)
	require.NoError(t, err)
	key := Key(req.Template, req.Body)
	assert.Equal(t, manifest.StatusFailed, resp.Status)
	assert.Equal(t, "no recorded response for 21-build-implementer (key "+key[:12]+")", resp.Reason)
	assert.False(t, resp.Reused)
	assert.Zero(t, n.Load())
	assert.NoDirExists(t, store.Dir(), "a miss records nothing")
}

func TestRunnerFailuresRunAgainLive(t *testing.T) {
	t.Parallel()
	req := newRequest(t, 21, "implementer", "build-implementer", intp(3), "Implement task 3.\n", false)
	dir := t.TempDir()
	calls, flag := filepath.Join(dir, "calls"), filepath.Join(dir, "fixed")
	// Fails until the flag file exists.
	live, err := New(countingScript(calls, "if [ -e "+flag+" ]; then echo 'SUMMARY: fixed'; else echo 'no disk' >&2; exit 3; fi"), Options{})
	require.NoError(t, err)
	store := OpenStore(req.DispatchDir)
	var n atomic.Int64
	r := &Runner{Agent: live, Store: store, Calls: &n}

	failed, err := r.Run(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, manifest.StatusFailed, failed.Status)
	assert.Equal(t, "agent exited 3: no disk", failed.Reason)

	// The recorded agent reproduces the recorded failure without a call.
	offline, err := New(SpecRecorded, Options{Store: store})
	require.NoError(t, err)
	replayed, err := (&Runner{Agent: offline, Store: store, Calls: &n}).Run(context.Background(), req)
	require.NoError(t, err)
	assert.True(t, replayed.Reused)
	assert.Equal(t, failed.Status, replayed.Status)
	assert.Equal(t, failed.Reason, replayed.Reason)

	// ReuseFailures reuses it for a live agent too.
	reuse := &Runner{Agent: live, Store: store, Calls: &n, ReuseFailures: true}
	again, err := reuse.Run(context.Background(), req)
	require.NoError(t, err)
	assert.True(t, again.Reused)
	assert.Equal(t, int64(1), n.Load())

	// By default a live runner calls again and replaces the recording.
	require.NoError(t, os.WriteFile(flag, nil, 0o644))
	fixed, err := r.Run(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, manifest.StatusCompleted, fixed.Status)
	assert.Equal(t, int64(2), n.Load())
	rec, ok, err := store.Lookup(fixed.Key)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, "fixed", rec.Summary)
}

func TestRunnerWithSimAndRecorded(t *testing.T) {
	t.Parallel()
	req := newRequest(t, 15, "reviewer", "build-reviewer", intp(2), mustLines(3), false)
	store := OpenStore(req.DispatchDir)
	sim, err := New(SpecSim, Options{})
	require.NoError(t, err)
	var n atomic.Int64
	live, err := (&Runner{Agent: sim, Store: store, Calls: &n}).Run(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, "Task 2 FAIL: 3 findings", live.Summary)
	assert.Equal(t, SpecSim, live.Agent)

	offline, err := New(SpecRecorded, Options{Store: store})
	require.NoError(t, err)
	replayed, err := (&Runner{Agent: offline, Store: store, Calls: &n}).Run(context.Background(), req)
	require.NoError(t, err)
	assert.True(t, replayed.Reused)
	assert.Equal(t, live.Summary, replayed.Summary)
	assert.Equal(t, live.Verdict, replayed.Verdict)
	assert.Equal(t, int64(1), n.Load())
}

func TestRunnerRejectsBadRequests(t *testing.T) {
	t.Parallel()
	sim, err := New(SpecSim, Options{})
	require.NoError(t, err)
	for name, r := range map[string]struct {
		runner *Runner
		req    Request
	}{
		"no agent":    {&Runner{}, Request{Seq: 1, Template: "t"}},
		"no seq":      {&Runner{Agent: sim}, Request{Template: "t"}},
		"no template": {&Runner{Agent: sim}, Request{Seq: 1}},
	} {
		_, err := r.runner.Run(context.Background(), r.req)
		assert.Error(t, err, name)
	}
}

func TestRunnerRecordsFingerprint(t *testing.T) {
	t.Parallel()
	req := newRequest(t, 21, "implementer", "build-implementer", intp(3), "Implement task 3.\n", true)
	req.ModelTier, req.TemplateSHA256 = "opus", sha256Hex([]byte("template text"))
	startTree := headCommit(t, req.WorkDir).TreeHash.String()
	live, err := New(SpecSim, Options{})
	require.NoError(t, err)
	store := OpenStore(req.DispatchDir)
	resp, err := (&Runner{Agent: live, Store: store}).Run(context.Background(), req)
	require.NoError(t, err)
	require.NotNil(t, resp.Fingerprint)
	want := Fingerprint{
		Template: "build-implementer", TemplateSHA256: req.TemplateSHA256, BodySHA256: sha256Hex(req.Body),
		Role: "implementer", ModelTier: "opus", Agent: SpecSim, InputTree: startTree,
	}
	assert.Equal(t, want, *resp.Fingerprint)
	assert.NotEqual(t, startTree, headCommit(t, req.WorkDir).TreeHash.String(), "the sim implementer committed: the input tree is the one before")

	got, ok, err := store.Lookup(resp.Key)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, want, *got.Fingerprint, "the recording keeps the fingerprint")
}

func TestFingerprintDiff(t *testing.T) {
	t.Parallel()
	a := Fingerprint{Template: "t", TemplateSHA256: "x", BodySHA256: "b", Role: "r", ModelTier: "m", Agent: "a", InputTree: "1"}
	b := a
	assert.Empty(t, a.Diff(b, false))
	b.InputTree, b.Agent = "2", "other"
	assert.Equal(t, []string{FieldAgent, FieldInputTree}, a.Diff(b, false))
	assert.Equal(t, []string{FieldAgent}, a.Diff(b, true), "template reuse ignores the input tree")
	b = a
	b.TemplateSHA256 = ""
	assert.Empty(t, a.Diff(b, false), "an unknown template hash is no difference")
	b.TemplateSHA256 = "y"
	assert.Equal(t, []string{FieldTemplateHash}, a.Diff(b, false))
}

func TestAgentIdentityHashesTheScript(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script := filepath.Join(dir, "agent.sh")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\necho one\n"), 0o755))
	first := AgentIdentity("./agent.sh --fast", dir)
	assert.True(t, strings.HasPrefix(first, "./agent.sh --fast#sha256:"), first)
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\necho two\n"), 0o755))
	assert.NotEqual(t, first, AgentIdentity("./agent.sh --fast", dir), "an edited script is another agent")
	assert.Equal(t, SpecSim, AgentIdentity(SpecSim, dir))
	assert.Equal(t, "./missing.sh", AgentIdentity("./missing.sh", dir))
}

// TestAgentIdentityKeepsASettledHash: the hash of a program whose times are
// settled is kept by its file's identity (programHashes) and equals the file's
// hash; one written again (the same size: only its content and times differ) is
// hashed again, and a fresh one is never kept.
func TestAgentIdentityKeepsASettledHash(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script := filepath.Join(dir, "agent.sh")
	kept := func() int {
		n := 0
		programHashes.Range(func(k, _ any) bool {
			if k.(programKey).path == script {
				n++
			}
			return true
		})
		return n
	}
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\necho one\n"), 0o755))
	one := "./agent.sh#sha256:" + sha256Hex([]byte("#!/bin/sh\necho one\n"))
	assert.Equal(t, one, AgentIdentity("./agent.sh", dir))
	assert.Equal(t, 0, kept(), "a program written just now is not kept")
	time.Sleep(programSettled + 100*time.Millisecond)
	for range 3 {
		assert.Equal(t, one, AgentIdentity("./agent.sh", dir))
	}
	assert.Equal(t, 1, kept(), "a settled program is kept once")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\necho two\n"), 0o755))
	assert.Equal(t, "./agent.sh#sha256:"+sha256Hex([]byte("#!/bin/sh\necho two\n")), AgentIdentity("./agent.sh", dir), "a rewritten program is hashed again")
}
