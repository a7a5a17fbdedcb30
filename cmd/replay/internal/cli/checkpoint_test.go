package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/exitcode"
	"github.com/replaytool/replay/internal/fixture"
	"github.com/replaytool/replay/internal/paths"
	"github.com/replaytool/replay/internal/prompt"
	"github.com/replaytool/replay/internal/testkit/testtools"
)

// cpSandbox is a project on branch feat/login and a HOME, both under t.TempDir().
type cpSandbox struct {
	root, home, project string
}

func newCPSandbox(t *testing.T) *cpSandbox {
	t.Helper()
	root := t.TempDir()
	sb := &cpSandbox{root: root, home: filepath.Join(root, "home"), project: filepath.Join(root, "project")}
	require.NoError(t, os.MkdirAll(sb.home, 0o755))
	repo, err := git.PlainInitWithOptions(sb.project, &git.PlainInitOptions{
		InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName("feat/login")},
	})
	require.NoError(t, err)
	sb.write(t, ".gitignore", "*.log\n")
	sb.write(t, "main.go", "package main\n")
	sb.write(t, "keep.log", "ignored\n")
	wt, err := repo.Worktree()
	require.NoError(t, err)
	require.NoError(t, wt.AddWithOptions(&git.AddOptions{All: true}))
	sig := &object.Signature{Name: "dev", Email: "dev@example.com", When: time.Date(2026, 4, 7, 14, 0, 0, 0, time.UTC)}
	_, err = wt.Commit("init", &git.CommitOptions{Author: sig, Committer: sig})
	require.NoError(t, err)
	return sb
}

func (sb *cpSandbox) write(t *testing.T, rel, content string) {
	t.Helper()
	p := filepath.Join(sb.project, rel)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
}

func (sb *cpSandbox) marker(t *testing.T, branch string) {
	t.Helper()
	scratch := paths.ScratchDir(sb.home, sb.project)
	require.NoError(t, os.MkdirAll(scratch, 0o755))
	m := `{"pipeline_id":"1775430161","skill":"build","phase":"3","start_time":"2026-04-07T14:00:00Z","scratch_dir":"` + scratch + `","dispatch_dir":"/tmp/x","branch":"` + branch + `","baseline_sha":"abc"}`
	require.NoError(t, os.WriteFile(filepath.Join(scratch, ".pipeline-active"), []byte(m), 0o644))
}

type cpRun struct {
	code           int
	stdout, stderr string
}

// run runs replay with args in the project directory; tty makes the streams terminals
// and answers confirmations from script.
func (sb *cpSandbox) run(t *testing.T, tty bool, script *prompt.Scripted, args ...string) cpRun {
	t.Helper()
	ios, _, out, errOut := testtools.Streams()
	ios.SetTTY(tty)
	env := map[string]string{"HOME": sb.home}
	f := &Factory{
		IOStreams: ios,
		Prompter:  func() prompt.Prompter { return script },
		Getenv:    func(k string) string { return env[k] },
		Getwd:     func() (string, error) { return sb.project, nil },
		Clock:     func() time.Time { return time.Date(2026, 4, 7, 18, 0, 0, 0, time.UTC) },
	}
	cmd := NewCmdRoot(f)
	cmd.SetArgs(args)
	code := Execute(f, cmd)
	return cpRun{code: code, stdout: out.String(), stderr: errOut.String()}
}

func TestCheckpointCreateListShow(t *testing.T) {
	t.Parallel()
	sb := newCPSandbox(t)
	r := sb.run(t, false, nil, "checkpoint", "create", "--reason", "pre-wave-1", "--source", "build", "--now", "2026-04-07T14:50:00Z")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `^Created checkpoint [0-9a-f]{8} \(pre-wave-1 \| 2026-04-07T14:50:00Z \| build\)\.\n$`, r.stdout)

	r = sb.run(t, false, nil, "checkpoint", "create", "--reason", "pre-wave-2")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "unchanged since checkpoint")

	sb.write(t, "task.go", "package main\n")
	r = sb.run(t, false, nil, "checkpoint", "create", "--reason", "pre-wave-2", "--source", "build")
	require.Equal(t, 0, r.code, r.stderr)

	// Not a terminal: a markdown table; --format text: the ASCII grid.
	r = sb.run(t, false, nil, "checkpoint", "list")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "| HASH     | TIME                 | REASON     | SOURCE | PROJECT HEAD |", strings.SplitN(r.stdout, "\n", 2)[0])
	r = sb.run(t, false, nil, "checkpoint", "list", "--format", "text")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Empty(t, r.stderr)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	require.Len(t, lines, 6, r.stdout)
	assert.Contains(t, lines[1], "HASH")
	assert.Contains(t, lines[1], "PROJECT HEAD")
	assert.Contains(t, lines[3], "2026-04-07 14:50:00")
	assert.Contains(t, lines[3], "pre-wave-1")
	assert.Contains(t, lines[4], "2026-04-07 18:00:00")

	r = sb.run(t, false, nil, "checkpoint", "list", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var doc struct {
		Checkpoints []checkpointJSON `json:"checkpoints"`
		Warnings    []string         `json:"warnings"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc))
	require.Len(t, doc.Checkpoints, 2)
	assert.Equal(t, "pre-wave-2", doc.Checkpoints[1].Reason)
	assert.True(t, doc.Checkpoints[1].InManifest)
	assert.Len(t, doc.Checkpoints[1].ProjectHead, 40)

	r = sb.run(t, false, nil, "checkpoint", "show", "pre-wave-2")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "Reason:       pre-wave-2")
	assert.Contains(t, r.stdout, "1 added, 0 modified, 0 deleted")
	assert.Contains(t, r.stdout, "  A task.go")

	r = sb.run(t, false, nil, "checkpoint", "create")
	assert.Equal(t, exitcode.Usage, r.code)
}

func TestCheckpointListWithoutShadow(t *testing.T) {
	t.Parallel()
	sb := newCPSandbox(t)
	r := sb.run(t, false, nil, "checkpoint", "list")
	assert.Equal(t, exitcode.Failure, r.code)
	assert.Contains(t, r.stderr, "no shadow checkpoint repository")
}

func TestCheckpointRestoreConfirmation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		tty      bool
		script   *prompt.Scripted
		args     []string
		branch   string
		wantCode int
		wantErr  string
	}{
		{name: "no TTY and no --yes", wantCode: exitcode.Refused, wantErr: "cannot ask for a confirmation (stdin is not a terminal): pass --yes"},
		{name: "--yes", args: []string{"--yes"}},
		{name: "-y with a matching marker", args: []string{"-y"}, branch: "feat/login"},
		{name: "prompt says yes", tty: true, script: &prompt.Scripted{Confirms: []bool{true}}},
		{name: "prompt says no", tty: true, script: &prompt.Scripted{Confirms: []bool{false}}, wantCode: exitcode.Refused, wantErr: "declined"},
		{name: "esc at the prompt declines", tty: true, script: &prompt.Scripted{Err: prompt.ErrAborted}, wantCode: exitcode.Refused, wantErr: "declined"},
		{name: "ctrl-c at the prompt exits 130", tty: true, script: &prompt.Scripted{Err: prompt.ErrInterrupted}, wantCode: exitcode.Interrupted, wantErr: "interrupted"},
		{name: "branch mismatch", args: []string{"--yes"}, branch: "main", wantCode: exitcode.Refused,
			wantErr: "Pipeline was running on branch main but you are on feat/login. Switch to main before resuming"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sb := newCPSandbox(t)
			if tt.branch != "" {
				sb.marker(t, tt.branch)
			}
			r := sb.run(t, false, nil, "checkpoint", "create", "--reason", "pre-wave-1")
			require.Equal(t, 0, r.code, r.stderr)
			sb.write(t, "main.go", "package main // edited\n")
			sb.write(t, "new.go", "package main\n")
			before, err := fixture.Digest(sb.root)
			require.NoError(t, err)

			r = sb.run(t, tt.tty, tt.script, append([]string{"checkpoint", "restore", "pre-wave-1"}, tt.args...)...)
			assert.Equal(t, tt.wantCode, r.code, r.stderr)
			if tt.wantCode != 0 {
				assert.Contains(t, r.stderr, tt.wantErr)
				after, err := fixture.Digest(sb.root)
				require.NoError(t, err)
				assert.Equal(t, before, after, "nothing changed")
				return
			}
			if tt.script != nil {
				require.Len(t, tt.script.Asked, 1)
				assert.Contains(t, tt.script.Asked[0], "pre-wave-1")
			}
			assert.Contains(t, r.stdout, "1 file written, 1 removed")
			if tt.tty {
				// One terminal shows both streams: the undo command once, before the restore.
				assert.NotContains(t, r.stdout, "Undo: replay checkpoint restore ")
				assert.Equal(t, 1, strings.Count(r.stderr, "To undo this restore: replay checkpoint restore "), r.stderr)
			} else {
				assert.Contains(t, r.stdout, "Undo: replay checkpoint restore ")
			}
			assert.Contains(t, r.stderr, "refs/replay/pre-restore/1775584800")
			data, err := os.ReadFile(filepath.Join(sb.project, "main.go"))
			require.NoError(t, err)
			assert.Equal(t, "package main\n", string(data))
			_, err = os.Stat(filepath.Join(sb.project, "new.go"))
			assert.True(t, os.IsNotExist(err))
			_, err = os.Stat(filepath.Join(sb.project, "keep.log"))
			assert.NoError(t, err, "ignored file kept")
		})
	}
}
