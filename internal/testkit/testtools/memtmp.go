package testtools

import (
	"os"
)

// MemoryTempDir points TMPDIR (and so every t.TempDir and os.MkdirTemp of the test
// binary) at a fresh directory in memory, /dev/shm, when the machine has a usable
// tmpfs there, and returns the function that removes it. The packages whose tests
// build thousands of small files (simulated runs, repositories, kill -9 loops) call
// it from TestMain: on a virtual machine's disk each file costs a millisecond of
// kernel time, on tmpfs a few microseconds, and what the tests check does not
// depend on the file system. REPLAY_TEST_TMPDIR=disk keeps the default temp dir
// (to run them on a real disk); so does a machine without such a tmpfs.
func MemoryTempDir() (cleanup func()) {
	nothing := func() {}
	if os.Getenv("REPLAY_TEST_TMPDIR") == "disk" {
		return nothing
	}
	base, ok := memoryDir()
	if !ok {
		return nothing
	}
	dir, err := os.MkdirTemp(base, "replay-test-")
	if err != nil {
		return nothing
	}
	old, had := os.LookupEnv("TMPDIR")
	os.Setenv("TMPDIR", dir)
	return func() {
		if had {
			os.Setenv("TMPDIR", old)
		} else {
			os.Unsetenv("TMPDIR")
		}
		os.RemoveAll(dir)
	}
}
