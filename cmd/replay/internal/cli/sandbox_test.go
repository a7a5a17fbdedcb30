package cli_test

import (
	"strings"
	"testing"

	"github.com/replaytool/replay/cmd/replay/internal/cli"
	"github.com/replaytool/replay/internal/prompt"
	"github.com/replaytool/replay/internal/testkit/e2ekit"
	"github.com/replaytool/replay/internal/testkit/testtools"
)

// Sandbox and Result are the one end-to-end harness's (internal/testkit/e2ekit);
// this package runs them in process (inProcess, set as the default runner).
type (
	Sandbox = e2ekit.Sandbox
	Result  = e2ekit.Result
)

func init() { e2ekit.DefaultRunner = inProcess{} }

// NewSandbox makes a sandbox under t.TempDir().
func NewSandbox(t *testing.T) *Sandbox { return e2ekit.New(t) }

// inProcess runs replay in this process, through the same root command and
// exit-code mapping as the binary, with dir as its working directory and only
// the given environment.
type inProcess struct{}

func (inProcess) Run(t testing.TB, dir, stdin string, environ, args []string) Result {
	t.Helper()
	ios, in, out, errOut := testtools.Streams()
	in.WriteString(stdin)
	env := e2ekit.EnvMap(environ)
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

// envMap turns KEY=VALUE pairs into a lookup table; a later pair wins.
func envMap(environ []string) map[string]string { return e2ekit.EnvMap(environ) }

func TestSandboxRunsInProcess(t *testing.T) {
	t.Parallel()
	if e2ekit.SystemTmpEnv != cli.SystemTmpEnv {
		t.Fatalf("the harness sandboxes %s, replay reads %s", e2ekit.SystemTmpEnv, cli.SystemTmpEnv)
	}
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
