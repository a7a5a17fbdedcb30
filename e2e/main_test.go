package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/replaytool/replay/internal/platform"
	"github.com/replaytool/replay/internal/testkit/e2ekit"
	"github.com/replaytool/replay/internal/testkit/testtools"
)

// binPath is the replay binary built once for all end-to-end tests.
var binPath string

func TestMain(m *testing.M) {
	if os.Getenv(rssSpawnEnv) != "" {
		os.Exit(rssSpawn())
	}
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
	e2ekit.DefaultRunner = e2ekit.Binary{Path: binPath}
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
	return e2ekit.CopyFile(kept, dst, 0o755)
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

// Sandbox and Result are the one end-to-end harness's (internal/testkit/e2ekit);
// this package runs them through the built binary (TestMain sets the runner).
type (
	Sandbox = e2ekit.Sandbox
	Result  = e2ekit.Result
)

// NewSandbox makes a sandbox under t.TempDir().
func NewSandbox(t *testing.T) *Sandbox { return e2ekit.New(t) }

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
