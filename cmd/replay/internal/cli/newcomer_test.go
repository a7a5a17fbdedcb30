package cli

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/exitcode"
	"github.com/replaytool/replay/internal/prompt"
	"github.com/replaytool/replay/internal/testkit/testtools"
)

// These tests cover the smaller things a newcomer trips on (issue 33).

func TestMisspelledCommandsAndFlagsGetASuggestion(t *testing.T) {
	t.Parallel()
	sb := newCPSandbox(t)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"chekpoint", "list"}, `unknown command "chekpoint" for "replay"; did you mean checkpoint?`},
		{[]string{"chekpoint"}, `did you mean checkpoint?`},
		{[]string{"plan", "--explian"}, "unknown flag: --explian; did you mean --explain?"},
		{[]string{"--mutat", "a.md=b.md"}, "did you mean --mutate?"},
		{[]string{"checkpoint", "list", "--jsn"}, "did you mean --json?"},
	}
	for _, tt := range tests {
		r := sb.run(t, false, nil, tt.args...)
		assert.Equal(t, exitcode.Usage, r.code, "%v: %s", tt.args, r.stderr)
		assert.Contains(t, r.stderr, tt.want, tt.args)
	}
	r := sb.run(t, false, nil, "status", "--frobnicate")
	assert.Equal(t, exitcode.Usage, r.code)
	assert.NotContains(t, r.stderr, "did you mean", "no suggestion for a word close to nothing")
}

func TestStatusWithoutHomeSaysSo(t *testing.T) {
	t.Parallel()
	sb := newCPSandbox(t)
	ios, _, out, errOut := testtools.Streams()
	f := &Factory{IOStreams: ios, Prompter: func() prompt.Prompter { return &prompt.Scripted{} },
		Getenv: func(string) string { return "" }, Getwd: func() (string, error) { return sb.project, nil }}
	cmd := NewCmdRoot(f)
	cmd.SetArgs([]string{"status"})
	code := Execute(f, cmd)
	assert.Equal(t, exitcode.Usage, code)
	assert.Contains(t, errOut.String(), "HOME is not set")
	assert.Contains(t, errOut.String(), "--scratch DIR")
	assert.Empty(t, out.String(), "no 'no pipeline' answer that reads like a result")

	r := sb.run(t, false, nil, "status")
	assert.Equal(t, 0, r.code, "with HOME set, status answers: %s", r.stderr)
}

func TestRestoreAnnouncedOnlyAfterTheYes(t *testing.T) {
	t.Parallel()
	sb := newCPSandbox(t)
	r := sb.run(t, false, nil, "checkpoint", "create", "--reason", "pre-wave-1")
	require.Equal(t, 0, r.code, r.stderr)
	sb.write(t, "main.go", "package main // edited\n")

	r = sb.run(t, true, &prompt.Scripted{Confirms: []bool{false}}, "checkpoint", "restore", "pre-wave-1")
	assert.Equal(t, exitcode.Refused, r.code)
	assert.NotContains(t, r.stderr+r.stdout, "Restoring the project directory", "declined: nothing says it is restoring")

	r = sb.run(t, false, nil, "checkpoint", "restore", "pre-wave-1")
	assert.Equal(t, exitcode.Refused, r.code)
	assert.NotContains(t, r.stderr+r.stdout, "Restoring the project directory", "no terminal and no --yes: refused, not restoring")

	script := &prompt.Scripted{Confirms: []bool{true}}
	r = sb.run(t, true, script, "checkpoint", "restore", "pre-wave-1")
	require.Equal(t, 0, r.code, r.stderr)
	require.Len(t, script.Asked, 1)
	assert.Contains(t, r.stderr, "Restoring the project directory")
}

func TestDiffWithReplicasIsAccepted(t *testing.T) {
	t.Parallel()
	f, _, _ := manifestFactory(t)
	var got *ResumeOptions
	cmd := NewCmdResume(f, func(o *ResumeOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--mutate", "a.md=b.md", "--replicas", "3", "--diff"})
	cmd.SetOut(&strings.Builder{})
	cmd.SetErr(&strings.Builder{})
	require.NoError(t, cmd.Execute())
	require.NotNil(t, got)
	assert.True(t, got.Diff)
	assert.Equal(t, 3, got.Replicas)
}

func TestStatusSentenceForARunWithNothingIncomplete(t *testing.T) {
	t.Parallel()
	s := PipelineStatus{Session: "1775430161", CrashedAt: "nothing incomplete: every dispatch ended completed or superseded",
		Redo: 2, ResumePoint: "Phase 3 boundary, wave 1 (pre-wave-1)"}
	got := crashSentence(s)
	assert.NotContains(t, got, "crashed at nothing")
	assert.Equal(t, "Session 1775430161 left nothing incomplete: every dispatch ended completed or superseded, yet a resume would re-execute 2 dispatches from Phase 3 boundary, wave 1 (pre-wave-1).", got)
	s.Redo = 0
	assert.Contains(t, crashSentence(s), "nothing to re-execute")
	s.CrashedAt, s.Redo = "Phase 3 (Execute) wave 2, seq 19 build-implementer t3 in flight", 1
	assert.Equal(t, "Session 1775430161 crashed at Phase 3 (Execute) wave 2, seq 19 build-implementer t3 in flight; 1 dispatch to re-execute.", crashSentence(s))
}
