package testtools

import (
	"os"
	"os/exec"
	"testing"
)

// RequireGitEnv names the variable that makes the git binary required: where it
// is set (CI sets it), a test that compares with git fails instead of skipping
// when git is missing, as REPLAY_REQUIRE_S3 and REPLAY_REQUIRE_CHROMIUM do for
// their servers.
const RequireGitEnv = "REPLAY_REQUIRE_GIT"

// Git returns the path of the git binary, for a test that compares with it or
// needs it to build its fixture. Without one the test is skipped, saying why;
// with REPLAY_REQUIRE_GIT set it fails instead.
func Git(t testing.TB, why string) string {
	t.Helper()
	path, ok := GitIfPresent(t)
	if !ok {
		t.Skipf("no git binary (%s); set %s=1 to make this a failure", why, RequireGitEnv)
	}
	return path
}

// GitIfPresent returns the path of the git binary and true, for a test that
// checks more with git when it is there; without one, false, and with
// REPLAY_REQUIRE_GIT set the test fails (it goes on, so its own checks run too).
func GitIfPresent(t testing.TB) (string, bool) {
	t.Helper()
	path, err := exec.LookPath("git")
	if err == nil {
		return path, true
	}
	if os.Getenv(RequireGitEnv) != "" {
		t.Fatalf("%s is set but there is no git binary (%v): install git", RequireGitEnv, err)
	}
	return "", false
}
