package runfile

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Where the kernel offers a ring, ReadListedAll reads through it (the equivalence
// test then covers the ring, not only the fallback); a round whose open the ring
// refuses would fall back.
func TestTheRingIsUsedWhereTheKernelOffersIt(t *testing.T) {
	ring, err := newHeadRing(2 * ringBatch)
	if err != nil {
		t.Skipf("no io_uring fit for the reads here: %v", err)
	}
	ring.close()
	dir := t.TempDir()
	names := make([]string, minRingFiles)
	for i := range names {
		names[i] = fmt.Sprintf("%d-x.md", i)
		require.NoError(t, os.WriteFile(filepath.Join(dir, names[i]), []byte(names[i]), 0o644))
	}
	heads := OpenHeads(dir, Dispatch)
	defer heads.Close()
	var got []string
	used := readListedRing(heads, names, headBytes, func(i int, head []byte, err error) {
		require.NoError(t, err)
		got = append(got, string(head))
	})
	assert.True(t, used)
	assert.Equal(t, names, got)
}

// With few descriptors to spare, a round whose opens run out of them is read file
// by file instead, and every name still gets its head.
func TestARoundOutOfDescriptorsFallsBackFileByFile(t *testing.T) {
	ring, err := newHeadRing(2 * ringBatch)
	if err != nil {
		t.Skipf("no io_uring fit for the reads here: %v", err)
	}
	ring.close()
	dir := t.TempDir()
	names := make([]string, 2*ringBatch)
	for i := range names {
		names[i] = fmt.Sprintf("%d-x.md", i)
		require.NoError(t, os.WriteFile(filepath.Join(dir, names[i]), []byte(names[i]), 0o644))
	}
	heads := OpenHeads(dir, Dispatch)
	defer heads.Close()
	fds, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	var lim syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim))
	low := lim
	low.Cur = uint64(len(fds) + 40) // room for the ring and some files, not a round's
	require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low))
	defer func() { require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)) }()
	var got []string
	heads.readListedAll(names, headBytes, func(i int, head []byte, err error) {
		assert.NoError(t, err, names[i])
		got = append(got, string(head))
	}, true)
	assert.Equal(t, names, got)
}
