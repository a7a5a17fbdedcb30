package resume

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/fixture"
	"github.com/replaytool/replay/internal/testkit/testtools"
)

// testRoot is this test binary's temporary directory: HOME and TMPDIR point inside
// it for every test, so the tests can run in parallel and stay hermetic.
var testRoot string

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	defer testtools.MemoryTempDir()()
	defer testtools.CollectLess()()
	root, err := os.MkdirTemp("", "replay-resume-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(root)
	testRoot = root
	for env, dir := range map[string]string{"HOME": "home", "TMPDIR": "tmp"} {
		path := filepath.Join(root, dir)
		if err := os.MkdirAll(path, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		os.Setenv(env, path)
	}
	return m.Run()
}

var (
	sharedOnce sync.Once
	sharedRef  *fixture.Pipeline
	sharedErr  error
)

// reference returns the reference fixture shared by the tests that only read it
// (load, decide, plan), built once per test binary.
func reference(t *testing.T) *fixture.Pipeline {
	t.Helper()
	sharedOnce.Do(func() {
		dir, err := os.MkdirTemp(testRoot, "reference-")
		if err != nil {
			sharedErr = err
			return
		}
		sharedRef, sharedErr = fixture.Build(dir, fixture.Options{})
	})
	require.NoError(t, sharedErr)
	return sharedRef
}
