package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/fixture"
	"github.com/replaytool/replay/internal/paths"
	"github.com/replaytool/replay/internal/prompt"
	"github.com/replaytool/replay/internal/testkit/testtools"
)

// runFixture runs replay with args in the fixture's project, HOME, TMPDIR and system
// tmp inside it; tty makes the streams terminals answered by script.
func runFixture(t *testing.T, p *fixture.Pipeline, tty bool, script *prompt.Scripted, args ...string) cpRun {
	t.Helper()
	ios, _, out, errOut := testtools.Streams()
	ios.SetTTY(tty)
	env := map[string]string{"HOME": p.Home, "TMPDIR": p.Tmp, SystemTmpEnv: p.SysTmp}
	f := &Factory{
		IOStreams: ios,
		Prompter:  func() prompt.Prompter { return script },
		Getenv:    func(k string) string { return env[k] },
		Getwd:     func() (string, error) { return p.Project, nil },
		Clock:     func() time.Time { return p.Now },
	}
	cmd := NewCmdRoot(f)
	cmd.SetArgs(args)
	code := Execute(f, cmd)
	return cpRun{code: code, stdout: out.String(), stderr: errOut.String()}
}

func TestNoCheckpointStartFresh(t *testing.T) {
	t.Parallel()
	p, err := fixture.Build(t.TempDir(), fixture.Options{Variants: []fixture.Variant{fixture.NoShadowRepo}})
	require.NoError(t, err)
	now := p.Now.UTC().Format(time.RFC3339)
	before, err := fixture.Digest(p.Root)
	require.NoError(t, err)

	// Enter on the menu answers its default: abort, exit 3, nothing changed.
	script := &prompt.Scripted{Selects: []int{2}}
	r := runFixture(t, p, true, script, "--now", now)
	assert.Equal(t, 3, r.code, r.stderr)
	assert.Equal(t, []int{2}, script.Defaults, "the cursor starts on abort")
	after, err := fixture.Digest(p.Root)
	require.NoError(t, err)
	assert.Equal(t, before, after)

	// Start fresh: the markers are archived, not deleted, and the way back is printed.
	projBefore, err := fixture.Digest(p.Project)
	require.NoError(t, err)
	r = runFixture(t, p, true, &prompt.Scripted{Selects: []int{1}}, "--now", now)
	require.Equal(t, 0, r.code, r.stderr)
	marker := filepath.Join(p.Scratch, ".pipeline-active")
	archived := marker + ".archived-" + strconv.FormatInt(p.Now.Unix(), 10)
	assert.Contains(t, r.stdout, "# Started fresh (session 1775430161)")
	assert.Contains(t, r.stdout, "Archived "+marker+" as "+archived+" (nothing deleted).")
	assert.Contains(t, r.stdout, "To start the pipeline again, run the build skill in "+p.Project)
	assert.Contains(t, r.stdout, "To undo: mv "+archived+" "+marker+";")
	assert.NoFileExists(t, marker)
	assert.FileExists(t, archived)
	projAfter, err := fixture.Digest(p.Project)
	require.NoError(t, err)
	assert.Equal(t, projBefore, projAfter, "the working tree is untouched")

	// The pipeline no longer counts as left behind.
	r = runFixture(t, p, false, nil, "status")
	assert.Equal(t, 0, r.code)
	assert.Contains(t, r.stdout, "No crashed or active pipeline")
	_, err = os.Stat(archived)
	assert.NoError(t, err)
}

// replay checkpoint writes where Crucible reads: <H> of the project's real path,
// and checkpoint-manifest.md inside the shadow git dir, rows only.
func TestCheckpointCreateUpstreamPlaceThroughSymlink(t *testing.T) {
	t.Parallel()
	sb := newCPSandbox(t)
	real, err := filepath.EvalSymlinks(sb.project)
	require.NoError(t, err)
	link := filepath.Join(sb.root, "via-link")
	require.NoError(t, os.Symlink(real, link))
	sb.project = link // the command runs in the symlinked path

	r := sb.run(t, false, nil, "checkpoint", "create", "--reason", "pre-wave-1", "--source", "build", "--now", "2026-04-07T14:50:00Z")
	require.Equal(t, 0, r.code, r.stderr)
	shadow := paths.ShadowDir(sb.home, real)
	data, err := os.ReadFile(filepath.Join(shadow, "checkpoint-manifest.md"))
	require.NoError(t, err, "the table is inside the shadow dir of the real path's <H>")
	assert.Regexp(t, `^\| [0-9a-f]{8} \| 2026-04-07 \d\d:50:00 \| pre-wave-1 \| build \|\n$`, string(data), "rows only")
	assert.NoDirExists(t, paths.ShadowDir(sb.home, link))

	r = sb.run(t, false, nil, "checkpoint", "list")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "pre-wave-1")
	assert.NotContains(t, r.stderr, "checkpoint-manifest.md")
}
