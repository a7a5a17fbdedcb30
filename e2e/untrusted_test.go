package e2e

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/fixture"
	"github.com/replaytool/replay/internal/testkit/e2ekit"
)

// hangGuard is how long one run may take before the test calls it hung. It guards
// against a regression that blocks forever; it is no speed requirement.
const hangGuard = 60 * time.Second

// runGuarded runs the binary like Sandbox.Run, but kills it and fails the test when
// it has not finished after hangGuard.
func runGuarded(t *testing.T, s *Sandbox, dir string, args ...string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, args...)
	cmd.Dir = dir
	cmd.Env = s.Environ()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("replay %v hung (killed after %s)", args, hangGuard)
	}
	code := 0
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		code = exitErr.ExitCode()
	} else if err != nil {
		t.Fatalf("running replay %v: %v", args, err)
	}
	return Result{Stdout: out.String(), Stderr: errOut.String(), Code: code}
}

// assertManifestSound checks that the original lines of the fixture's manifest are
// byte for byte where they were and that every line after them is valid.
func assertManifestSound(t *testing.T, p *fixture.Pipeline, original []byte) {
	t.Helper()
	data, err := os.ReadFile(p.ManifestPath)
	require.NoError(t, err)
	// A torn last line moves, byte for byte, to its sidecar at the first append.
	require.True(t, bytes.HasPrefix(data, e2ekit.WithoutTornTail(original)), "the original manifest lines are untouched")
	readManifest(t, p)
	if len(data) > len(original) {
		assert.True(t, strings.HasSuffix(string(data), "\n"), "no torn line left by a killed replay")
	}
}
