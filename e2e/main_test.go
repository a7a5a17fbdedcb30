package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/replaytool/replay/internal/platform"
	"github.com/replaytool/replay/internal/testtools"
)

// binPath is the replay binary built once for all end-to-end tests.
var binPath string

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	defer testtools.MemoryTempDir()()
	dir, err := os.MkdirTemp("", "replay-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: cannot make a temp dir:", err)
		return 1
	}
	binPath = filepath.Join(dir, "replay")
	if err := buildBinary(binPath); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.RemoveAll(dir)
		return 1
	}
	code := m.Run()
	os.RemoveAll(dir)
	return code
}

// buildBinary builds replay to dst. The go command links only when its output is
// missing or out of date, so the binary is built to a place kept between runs
// (beside the Go build cache, one per checkout) and copied to dst under a lock:
// a warm run does not link again, and a parallel run never sees a half-written file.
func buildBinary(dst string) error {
	kept, err := keptBinary()
	if err != nil {
		return goBuild(dst)
	}
	if err := os.MkdirAll(filepath.Dir(kept), 0o755); err != nil {
		return goBuild(dst)
	}
	lock, err := os.OpenFile(kept+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return goBuild(dst)
	}
	defer lock.Close()
	if err := platform.Lock(lock); err != nil {
		return goBuild(dst)
	}
	if err := goBuild(kept); err != nil {
		return err
	}
	return copyFileTo(kept, dst, 0o755)
}

// keptBinary is where buildBinary keeps the binary of this checkout.
func keptBinary() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(filepath.Dir(wd)))
	dir, err := testtools.Dir("e2e-" + hex.EncodeToString(sum[:8]))
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "replay"), nil
}

func goBuild(dst string) error {
	build := exec.Command("go", "build", "-o", dst, "github.com/replaytool/replay/cmd/replay")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("go build failed: %w", err)
	}
	return nil
}

// Sandbox is a hermetic place to run the binary: HOME and TMPDIR live inside it.
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

// Result is what one run of the binary produced.
type Result struct {
	Stdout string
	Stderr string
	Code   int
}

// Run runs the binary with args in dir (the sandbox root when empty), no stdin.
func (s *Sandbox) Run(t *testing.T, dir string, args ...string) Result {
	t.Helper()
	return s.RunInput(t, dir, "", args...)
}

// RunInput runs the binary with args in dir and stdin as standard input.
func (s *Sandbox) RunInput(t *testing.T, dir, stdin string, args ...string) Result {
	t.Helper()
	if dir == "" {
		dir = s.Root
	}
	cmd := exec.Command(binPath, args...)
	cmd.Dir = dir
	cmd.Env = s.environ()
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

// Command returns an unstarted command for the binary, with the sandbox environment.
func (s *Sandbox) Command(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command(binPath, args...)
	cmd.Dir = dir
	cmd.Env = s.environ()
	return cmd
}

// Git returns an unstarted git binary command with the sandbox environment (HOME
// inside the sandbox, no system config), for tests that compare with git.
func (s *Sandbox) Git(args ...string) *exec.Cmd {
	cmd := exec.Command("git", args...)
	cmd.Env = s.environ()
	return cmd
}

func (s *Sandbox) environ() []string {
	env := []string{
		"HOME=" + s.Home,
		"TMPDIR=" + s.Tmp,
		"PATH=" + os.Getenv("PATH"),
		"NO_COLOR=1",
		"REPLAY_PROMPT_DISABLED=1",
		"GIT_CONFIG_NOSYSTEM=1",
		"REPLAY_SYSTEM_TMP=" + filepath.Join(s.Root, "systmp"), // never the real /tmp
	}
	return append(env, s.Env...)
}

func TestVersionAndHelp(t *testing.T) {
	t.Parallel()
	s := NewSandbox(t)
	r := s.Run(t, "", "version")
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, "replay ") {
		t.Fatalf("version: code %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	r = s.Run(t, "", "--help")
	if r.Code != 0 || !strings.Contains(r.Stdout, "EXIT STATUS") {
		t.Fatalf("help: code %d, stdout %q", r.Code, r.Stdout)
	}
	r = s.Run(t, "", "--no-such-flag")
	if r.Code != 2 || !strings.Contains(r.Stderr, "unknown flag") {
		t.Fatalf("bad flag: code %d, stderr %q", r.Code, r.Stderr)
	}
	r = s.Run(t, "", "completion", "bash")
	if r.Code != 0 || !strings.Contains(r.Stdout, "bash completion") {
		t.Fatalf("completion: code %d, stderr %q", r.Code, r.Stderr)
	}
}
