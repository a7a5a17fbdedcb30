// Package e2ekit is the one end-to-end harness: a hermetic sandbox (HOME, TMPDIR
// and the system temp dir inside it) that runs replay with arguments and returns
// what it printed and its exit code, and the fixture helpers the end-to-end tests
// share. The e2e package runs the built binary through it, the cli package's
// e2e_*_test.go run the root command in process through it: one harness, two
// runners.
//
// It is test-only: no product package imports it (TestLayoutListsEveryPackage
// checks that nothing outside tests and the harness imports internal/testkit).
package e2ekit

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Runner runs replay with args in dir, stdin as its standard input and env as
// its whole environment.
type Runner interface {
	Run(t testing.TB, dir, stdin string, env, args []string) Result
}

// DefaultRunner runs the sandboxes that name no Runner: a test package sets it
// once (in TestMain or init) to the binary or to its in-process root command.
var DefaultRunner Runner

// Sandbox is a hermetic place to run replay: HOME, TMPDIR and the system temp dir
// live inside it, and every run sees only the sandbox's environment.
type Sandbox struct {
	Root string
	Home string
	Tmp  string
	// Env holds extra KEY=VALUE pairs for every run.
	Env []string
	// Runner runs replay; nil is DefaultRunner.
	Runner Runner
}

// Result is what one run of replay produced.
type Result struct {
	Stdout string
	Stderr string
	Code   int
}

// SystemTmpEnv names the variable that stands for the system temp dir (/tmp) in
// replay, so a sandboxed run never writes to the real one.
const SystemTmpEnv = "REPLAY_SYSTEM_TMP"

// New makes a sandbox under t.TempDir().
func New(t testing.TB) *Sandbox {
	t.Helper()
	root := t.TempDir()
	s := &Sandbox{Root: root, Home: filepath.Join(root, "home"), Tmp: filepath.Join(root, "tmp")}
	for _, d := range []string{s.Home, s.Tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatalf("sandbox: %v", err)
		}
	}
	return s
}

// Run runs replay with args in dir (the sandbox root when empty), no stdin.
func (s *Sandbox) Run(t testing.TB, dir string, args ...string) Result {
	t.Helper()
	return s.RunInput(t, dir, "", args...)
}

// RunInput runs replay with args in dir (the sandbox root when empty) and stdin
// as standard input. Paths in args should be absolute: an in-process run does
// not change the process's working directory.
func (s *Sandbox) RunInput(t testing.TB, dir, stdin string, args ...string) Result {
	t.Helper()
	if dir == "" {
		dir = s.Root
	}
	r := s.Runner
	if r == nil {
		r = DefaultRunner
	}
	if r == nil {
		t.Fatal("e2ekit: no Runner: set e2ekit.DefaultRunner in the test package")
	}
	return r.Run(t, dir, stdin, s.Environ(), args)
}

// Environ is the whole environment of a run in the sandbox.
func (s *Sandbox) Environ() []string {
	env := []string{
		"HOME=" + s.Home,
		"TMPDIR=" + s.Tmp,
		"PATH=" + os.Getenv("PATH"),
		"NO_COLOR=1",
		"REPLAY_PROMPT_DISABLED=1",
		"GIT_CONFIG_NOSYSTEM=1",
		SystemTmpEnv + "=" + filepath.Join(s.Root, "systmp"), // never the real /tmp
	}
	return append(env, s.Env...)
}

// Git returns an unstarted git binary command with the sandbox environment (HOME
// inside the sandbox, no system config), for tests that compare with git.
func (s *Sandbox) Git(args ...string) *exec.Cmd {
	cmd := exec.Command("git", args...)
	cmd.Env = s.Environ()
	return cmd
}

// GitOut runs git with args in dir as a developer would (an author and committer
// set) and returns its trimmed output; a failure fails the test with git's stderr.
func (s *Sandbox) GitOut(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := s.Git(args...)
	cmd.Dir = dir
	cmd.Env = append(cmd.Env, "GIT_AUTHOR_NAME=dev", "GIT_AUTHOR_EMAIL=dev@example.com", "GIT_COMMITTER_NAME=dev", "GIT_COMMITTER_EMAIL=dev@example.com")
	out, err := cmd.Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, ee.Stderr)
	}
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out))
}

// Binary is the Runner of the built binary at Path.
type Binary struct{ Path string }

// Run runs the binary as a real process.
func (b Binary) Run(t testing.TB, dir, stdin string, env, args []string) Result {
	t.Helper()
	cmd := b.Command(dir, env, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		code = exitErr.ExitCode()
	} else if err != nil {
		t.Fatalf("running replay %v: %v", args, err)
	}
	return Result{Stdout: out.String(), Stderr: errOut.String(), Code: code}
}

// Command returns an unstarted command of the binary in dir with env.
func (b Binary) Command(dir string, env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(b.Path, args...)
	cmd.Dir, cmd.Env = dir, env
	return cmd
}

// EnvMap turns KEY=VALUE pairs into a lookup table; a later pair wins.
func EnvMap(environ []string) map[string]string {
	m := make(map[string]string, len(environ))
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

// Commander is a Runner that can also hand out an unstarted process (the
// binary's): tests that signal, time or stream a run need one.
type Commander interface {
	Command(dir string, env []string, args ...string) *exec.Cmd
}

// Command returns an unstarted replay process in dir with the sandbox's
// environment; the runner must be a Commander (the binary), else it panics: an
// in-process run has no process to start.
func (s *Sandbox) Command(dir string, args ...string) *exec.Cmd {
	r := s.Runner
	if r == nil {
		r = DefaultRunner
	}
	c, ok := r.(Commander)
	if !ok {
		panic("e2ekit: Sandbox.Command needs a runner that starts processes (e2ekit.Binary)")
	}
	return c.Command(dir, s.Environ(), args...)
}
