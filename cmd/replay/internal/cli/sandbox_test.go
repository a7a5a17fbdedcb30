package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/replaytool/replay/cmd/replay/internal/cli"
	"github.com/replaytool/replay/internal/iostreams"
	"github.com/replaytool/replay/internal/prompt"
)

// Sandbox is a hermetic place to run replay in this process: HOME, TMPDIR and the
// system tmp live inside it, and every run sees only the sandbox's environment.
type Sandbox struct {
	Root string
	Home string
	Tmp  string
	// Env holds extra KEY=VALUE pairs for every run.
	Env []string
}

// NewSandbox makes a sandbox under t.TempDir().
func NewSandbox(t *testing.T) *Sandbox {
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

// Result is what one run of replay produced.
type Result struct {
	Stdout string
	Stderr string
	Code   int
}

// Run runs replay with args in dir (the sandbox root when empty), no stdin.
func (s *Sandbox) Run(t *testing.T, dir string, args ...string) Result {
	t.Helper()
	return s.RunInput(t, dir, "", args...)
}

// RunInput runs replay in this process with args, dir as its working directory and
// stdin as standard input, through the same root command and exit-code mapping as
// the binary. Paths in args should be absolute: the process's own working
// directory is not dir.
func (s *Sandbox) RunInput(t *testing.T, dir, stdin string, args ...string) Result {
	t.Helper()
	if dir == "" {
		dir = s.Root
	}
	ios, in, out, errOut := iostreams.Test()
	in.WriteString(stdin)
	environ := s.environ()
	env := envMap(environ)
	ios.SetEnv(func(k string) string { return env[k] })
	f := &cli.Factory{
		IOStreams: ios,
		Prompter:  func() prompt.Prompter { return &prompt.Scripted{} },
		Getenv:    func(k string) string { return env[k] },
		Getwd:     func() (string, error) { return dir, nil },
		Environ:   func() []string { return append([]string(nil), environ...) },
	}
	cmd := cli.NewCmdRoot(f)
	cmd.SetArgs(args)
	code := cli.Execute(f, cmd)
	return Result{Stdout: out.String(), Stderr: errOut.String(), Code: code}
}

func (s *Sandbox) environ() []string {
	env := []string{
		"HOME=" + s.Home,
		"TMPDIR=" + s.Tmp,
		"PATH=" + os.Getenv("PATH"),
		"NO_COLOR=1",
		"REPLAY_PROMPT_DISABLED=1",
		"GIT_CONFIG_NOSYSTEM=1",
		cli.SystemTmpEnv + "=" + filepath.Join(s.Root, "systmp"), // never the real /tmp
	}
	return append(env, s.Env...)
}

// envMap turns KEY=VALUE pairs into a lookup table; a later pair wins.
func envMap(environ []string) map[string]string {
	m := make(map[string]string, len(environ))
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

func TestSandboxRunsInProcess(t *testing.T) {
	t.Parallel()
	s := NewSandbox(t)
	r := s.Run(t, "", "version")
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, "replay ") {
		t.Fatalf("version: code %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	r = s.Run(t, "", "--no-such-flag")
	if r.Code != 2 || !strings.Contains(r.Stderr, "unknown flag") {
		t.Fatalf("bad flag: code %d, stderr %q", r.Code, r.Stderr)
	}
}
