package cli_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/fixture"
	"github.com/replaytool/replay/internal/testkit/testtools"
)

// hangGuard is how long one run may take before the test calls it hung. It guards
// against a regression that blocks forever; it is no speed requirement.
const hangGuard = 60 * time.Second

// runGuarded runs replay like Sandbox.Run, but fails the test when it has not
// finished after hangGuard (the blocked run is left behind: the test has failed).
func runGuarded(t *testing.T, s *Sandbox, dir string, args ...string) Result {
	t.Helper()
	done := make(chan Result, 1)
	go func() { done <- s.Run(t, dir, args...) }()
	select {
	case r := <-done:
		return r
	case <-time.After(hangGuard):
		t.Fatalf("replay %v hung (still running after %s)", args, hangGuard)
		return Result{}
	}
}

func TestMarkerThatIsNotARegularFile(t *testing.T) {
	t.Parallel()
	for name, plant := range map[string]func(path string) error{
		"FIFO":                 func(path string) error { return testtools.Mkfifo(path, 0o644) },
		"symlink to /dev/zero": func(path string) error { return os.Symlink("/dev/zero", path) },
	} {
		t.Run(name, func(t *testing.T) {
			s, p := pipelineSandbox(t)
			marker := filepath.Join(p.Scratch, ".pipeline-active")
			require.NoError(t, os.Remove(marker))
			require.NoError(t, plant(marker))
			project := digest(t, p.Project)
			manifestBytes, err := os.ReadFile(p.ManifestPath)
			require.NoError(t, err)

			r := runGuarded(t, s, p.Project, "status")
			assert.Contains(t, r.Stdout+r.Stderr, marker)
			assert.Contains(t, r.Stdout+r.Stderr, "not a regular file")
			for _, args := range [][]string{
				{"plan", p.Scratch, "--now", now(p)},
				{"plan", p.ManifestPath, "--now", now(p)},
				{"plan", "--now", now(p)},
				{p.Scratch, "--yes", "--now", now(p)},
				{p.ManifestPath, "--yes", "--now", now(p)},
			} {
				r := runGuarded(t, s, p.Project, args...)
				assert.NotEqual(t, 0, r.Code, "%v: a marker that cannot be read is an error, never skipped", args)
				assert.Contains(t, r.Stderr, marker, "%v", args)
				assert.Contains(t, r.Stderr, "not a regular file", "%v", args)
				assertNoPanic(t, r)
			}
			assert.Equal(t, project, digest(t, p.Project), "nothing restored")
			after, err := os.ReadFile(p.ManifestPath)
			require.NoError(t, err)
			assert.Equal(t, manifestBytes, after, "nothing appended")
		})
	}
}

func TestHugeSeqIsDescribedNotEnumerated(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	f, err := os.OpenFile(p.ManifestPath, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	// The fixture ends in a torn line; these two lines start on their own.
	_, err = f.WriteString("\n" + `{"seq":9999999,"role":"implementer","phase":"3","status":"dispatched"}` + "\n" +
		`{"seq":100000000,"role":"implementer","phase":"3","status":"dispatched"}` + "\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())

	r := runGuarded(t, s, p.Project, "plan", p.Scratch, "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "seqs 20–9,999,998")
	assert.Contains(t, r.Stdout, `"seq" 100000000 is out of range (0 to 10000000)`)
	assert.Less(t, len(r.Stdout), 64<<10, "the plan stays small")
	assert.Contains(t, r.Stdout, "**Next seq:** 10000000\n", "the refused seq does not move the next seq")
	// The fixture's torn line is now an interior line; it names seq 20 whole, so
	// `manifest seq` still knows the next free seq, and says how to repair the file.
	r = runGuarded(t, s, p.Project, "manifest", "seq", "--dir", filepath.Dir(p.ManifestPath))
	assert.Equal(t, 0, r.Code, r.Stderr)
	assert.Equal(t, "10000000\n", r.Stdout)
	assert.Contains(t, r.Stderr, "it names seq 20")
	assert.Contains(t, r.Stderr, "replay manifest repair --dir")
}

func TestReceivedShadowAimedAtAnotherClone(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	victim := filepath.Join(p.Root, "other-clone")
	clone := s.Git("clone", "-q", p.Project, victim)
	out, err := clone.CombinedOutput()
	require.NoError(t, err, string(out))
	writeFile(t, victim, "untracked-precious.txt", "not in any checkpoint\n", 0o644)
	shadow := shadowOf(t, p)
	cfg := s.Git("config", "--file", filepath.Join(shadow, "config"), "core.worktree", victim)
	out, err = cfg.CombinedOutput()
	require.NoError(t, err, string(out))
	victimBefore, projectBefore := digest(t, victim), digest(t, p.Project)

	r := runGuarded(t, s, p.Project, p.Scratch, "--yes", "--now", now(p))
	assert.Equal(t, 3, r.Code, r.Stderr)
	assert.Contains(t, r.Stderr, "core.worktree is "+victim)
	assert.Contains(t, r.Stderr, "the project directory is "+p.Project)

	r = runGuarded(t, s, victim, p.Scratch, "--yes", "--now", now(p))
	assert.Equal(t, 3, r.Code, "run from the other clone: the shadow repository is another project's\n%s", r.Stderr)
	assert.Contains(t, r.Stderr, victim)

	r = runGuarded(t, s, p.Project, "checkpoint", "restore", "pre-wave-2", "--yes", "--now", now(p))
	assert.Equal(t, 3, r.Code, r.Stderr)
	assert.Contains(t, r.Stderr, "core.worktree is "+victim)

	r = runGuarded(t, s, p.Project, "plan", p.Scratch, "--now", now(p))
	assert.Equal(t, 0, r.Code, "plan warns and still plans, read-only\n%s", r.Stderr)
	assert.Contains(t, r.Stdout, "core.worktree is "+victim)
	assert.Contains(t, r.Stdout, "**Project directory:** "+p.Project)

	assert.Equal(t, victimBefore, digest(t, victim), "the other clone is untouched")
	assert.Equal(t, projectBefore, digest(t, p.Project), "nothing restored")
}

func TestMatchingShadowRestoresAndNamesTheTarget(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	link := filepath.Join(p.Root, "project-link")
	require.NoError(t, os.Symlink(p.Project, link))
	// Through a symlinked path to the same project: the real paths agree.
	r := runGuarded(t, s, p.Root, p.Scratch, "--repo", link, "--yes", "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stderr, "Restoring the project directory "+link+" to checkpoint")
}

// shadowOf returns the fixture's shadow repository directory.
func shadowOf(t *testing.T, p *fixture.Pipeline) string {
	t.Helper()
	dir := filepath.Join(filepath.Dir(p.Scratch), "checkpoints", filepath.Base(filepath.Dir(p.Scratch)))
	_, err := os.Stat(filepath.Join(dir, "HEAD"))
	require.NoError(t, err)
	return dir
}

func TestPlantedSymlinksAreNotFollowed(t *testing.T) {
	t.Parallel()
	ag := "cat >/dev/null; echo oops >&2; echo 'SUMMARY: done'"
	for _, c := range []struct {
		name  string
		plant func(t *testing.T, dispatchDir, outside string) (victim string)
		args  func(p *fixture.Pipeline) []string
	}{
		{"symlinked agent-logs dir", func(t *testing.T, dd, outside string) string {
			require.NoError(t, os.Symlink(outside, filepath.Join(dd, "agent-logs")))
			return filepath.Join(outside, "21-build-implementer.stderr.log")
		}, nil},
		{"symlinked log file", func(t *testing.T, dd, outside string) string {
			require.NoError(t, os.MkdirAll(filepath.Join(dd, "agent-logs"), 0o755))
			victim := filepath.Join(outside, "victim.txt")
			require.NoError(t, os.Symlink(victim, filepath.Join(dd, "agent-logs", "21-build-implementer.stderr.log")))
			return victim
		}, nil},
		{"symlinked responses dir", func(t *testing.T, dd, outside string) string {
			require.NoError(t, os.Symlink(outside, filepath.Join(dd, "responses")))
			return filepath.Join(outside, "victim.txt")
		}, nil},
		{"symlinked report file", func(t *testing.T, dd, outside string) string {
			// The A/B session is the Unix seconds of --now: the link is planted below.
			return filepath.Join(outside, "victim.txt")
		}, func(p *fixture.Pipeline) []string {
			return []string{"--mutate", "build-reviewer-prompt.md=" + filepath.Join(p.Templates, "build-reviewer-prompt.md"), "--templates", p.Templates, "--diff", "--agent", "builtin:sim"}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, p := pipelineSandbox(t)
			outside := filepath.Join(p.Root, "outside")
			require.NoError(t, os.Mkdir(outside, 0o755))
			dd := filepath.Dir(p.ManifestPath)
			victim := c.plant(t, dd, outside)
			require.NoError(t, os.WriteFile(victim, []byte("keep me\n"), 0o644))
			args := []string{p.Scratch, "--yes", "--agent", "sh -c \"" + ag + "\"", "--now", now(p)}
			if c.args != nil {
				link := filepath.Join(dd, "replay-diff-"+strconv.FormatInt(p.Now.Unix(), 10)+".md")
				require.NoError(t, os.Symlink(victim, link))
				args = append([]string{p.Scratch}, append(c.args(p), "--now", now(p))...)
			}
			r := runGuarded(t, s, p.Project, args...)
			if c.name == "symlinked responses dir" {
				// The agent ran: its result is kept and only its recording is refused, with a warning.
				assert.Equal(t, 0, r.Code, r.Stderr)
			} else {
				assert.NotEqual(t, 0, r.Code, r.Stdout)
			}
			assert.Contains(t, r.Stderr, "is a symbolic link", r.Stderr)
			assertNoPanic(t, r)
			data, err := os.ReadFile(victim)
			require.NoError(t, err)
			assert.Equal(t, "keep me\n", string(data), "the file outside the run is untouched")
			entries, err := os.ReadDir(outside)
			require.NoError(t, err)
			assert.Len(t, entries, 1, "nothing new written outside the run")
		})
	}
}

func TestValuesFromFilesArePrintedEscaped(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	f, err := os.OpenFile(p.ManifestPath, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	evil := `NUL\u0000 ESC\u001b[31mred\u001b[0m CR\rback bidi\u202Etxt.exe`
	_, err = fmt.Fprintf(f, "\n"+`{"seq":1,"file":"1-innovate.md","role":"innovate","phase":"1","status":"completed","summary":"%s"}`+"\n", evil)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	marker := filepath.Join(p.Scratch, ".pipeline-active")
	data, err := os.ReadFile(marker)
	require.NoError(t, err)
	require.Contains(t, string(data), `"phase": "3"`)
	data = bytes.Replace(data, []byte(`"phase": "3"`), []byte(`"phase":"3\u001b]0;pwned\u0007"`), 1)
	require.NoError(t, os.WriteFile(marker, data, 0o644))

	for _, args := range [][]string{
		{"plan", p.Scratch, "--explain", "--now", now(p)},
		{"status"},
	} {
		r := runGuarded(t, s, p.Project, args...)
		out := r.Stdout + r.Stderr
		for _, raw := range []string{"\x00", "\x1b", "\r", "\u202e", "\x07"} {
			assert.NotContains(t, out, raw, "%v prints a raw %q", args, raw)
		}
		assertNoPanic(t, r)
		if args[0] == "plan" {
			assert.Contains(t, r.Stdout, `NUL\x00 ESC\x1b[31mred\x1b[0m CR\rback bidi\u202etxt.exe`)
		}
	}
}
