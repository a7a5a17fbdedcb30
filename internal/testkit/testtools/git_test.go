package testtools

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

// recorder is a testing.TB that records a skip or a failure instead of acting.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper()                           {}
func (r *recorder) Skipf(format string, args ...any)  { r.skipped = fmt.Sprintf(format, args...) }
func (r *recorder) Fatalf(format string, args ...any) { r.failed = fmt.Sprintf(format, args...) }

// Without git a comparison skips, and fails under REPLAY_REQUIRE_GIT; with git
// it goes on, required or not.
func TestGitSkipsOrFailsWithoutGit(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no git here
	t.Setenv(RequireGitEnv, "")
	r := &recorder{TB: t}
	Git(r, "the reference")
	assert.Contains(t, r.skipped, "the reference")
	assert.Empty(t, r.failed)

	t.Setenv(RequireGitEnv, "1")
	r = &recorder{TB: t}
	_, ok := GitIfPresent(r)
	assert.False(t, ok)
	assert.Contains(t, r.failed, "REPLAY_REQUIRE_GIT is set but there is no git binary")
}

func TestGitGoesOnWithGit(t *testing.T) {
	real := Git(t, "this test checks what happens with one")
	t.Setenv("PATH", filepath.Dir(real))
	t.Setenv(RequireGitEnv, "1")
	r := &recorder{TB: t}
	assert.Equal(t, real, Git(r, "x"))
	assert.Empty(t, r.skipped)
	assert.Empty(t, r.failed)
}
