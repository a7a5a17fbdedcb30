package cli

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/replaytool/replay/internal/runfile"
	"github.com/replaytool/replay/internal/safewrite"
)

// demoCommand returns how the demo's follow-up commands call replay so that they
// work when pasted into a shell: "replay" when that name on PATH is this binary,
// else this binary's absolute path. A binary built by `go run` lives in a build
// directory the go command deletes when it exits; with a kept example it is copied
// to <root>/bin/replay first and that copy is named.
func demoCommand(root string, keep bool) (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "replay", nil
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	if onPath, err := exec.LookPath("replay"); err == nil && sameFile(onPath, exe) {
		return "replay", nil
	}
	if !builtByGoRun(exe) {
		return exe, nil
	}
	if !keep {
		return "replay", nil
	}
	dst := filepath.Join(root, "bin", "replay")
	if err := copyExecutable(exe, dst); err != nil {
		return "", fmt.Errorf("demo: keeping a copy of the go run binary for the follow-up commands: %w", err)
	}
	return dst, nil
}

// builtByGoRun reports whether exe is a binary `go run` built: .../go-build*/bNNN/exe/NAME.
func builtByGoRun(exe string) bool {
	dir := filepath.Dir(exe)
	return filepath.Base(dir) == "exe" && strings.HasPrefix(filepath.Base(filepath.Dir(filepath.Dir(dir))), "go-build")
}

// sameFile reports whether the paths a and b name the same file.
func sameFile(a, b string) bool {
	sa, err := os.Stat(a)
	if err != nil {
		return false
	}
	sb, err := os.Stat(b)
	return err == nil && os.SameFile(sa, sb)
}

// copyExecutable copies src to the new file dst (its directory made), mode 0755.
func copyExecutable(src, dst string) error {
	if err := safewrite.MkdirAll(filepath.Dir(dst)); err != nil {
		return err
	}
	in, err := runfile.Open(src, runfile.Kind{What: "replay executable", Max: 1 << 30})
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := safewrite.OpenInRoot(filepath.Dir(dst), filepath.Base(dst), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
