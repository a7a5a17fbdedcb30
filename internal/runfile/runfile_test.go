//go:build unix

package runfile

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOpenRefusesWhatIsNotARegularFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	zero := filepath.Join(dir, "zero")
	require.NoError(t, os.Symlink("/dev/zero", zero))
	sub := filepath.Join(dir, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	for name, c := range map[string]struct{ path, want string }{
		"fifo":            {fifo, "a FIFO (named pipe)"},
		"symlink to zero": {zero, "a character device"},
		"directory":       {sub, "a directory"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ReadFile(c.path, Marker)
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrNotRegular)
			assert.Contains(t, err.Error(), c.path)
			assert.Contains(t, err.Error(), "pipeline marker is "+c.want)
			_, err = ReadHead(c.path, Dispatch, 10)
			assert.ErrorIs(t, err, ErrNotRegular)
		})
	}
}

func TestReadFileLimits(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "m")
	kind := Kind{"test file", 10}
	require.NoError(t, os.WriteFile(path, []byte("0123456789"), 0o644))
	data, err := ReadFile(path, kind)
	require.NoError(t, err)
	assert.Equal(t, "0123456789", string(data))

	require.NoError(t, os.WriteFile(path, []byte("0123456789x"), 0o644))
	_, err = ReadFile(path, kind)
	require.ErrorIs(t, err, ErrTooLarge)
	assert.Equal(t, path+": the test file is larger than the limit of 10 bytes for a test file; is this the right file?", err.Error())

	_, err = ReadFile(filepath.Join(dir, "missing"), kind)
	assert.ErrorIs(t, err, fs.ErrNotExist)
}

func TestReadStopsAtTheLimitWhenTheFileGrows(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "grows")
	require.NoError(t, os.WriteFile(path, []byte("abc"), 0o644))
	r, err := Open(path, Kind{"growing file", 4})
	require.NoError(t, err)
	defer r.Close()
	require.NoError(t, os.WriteFile(path, []byte("abcdefgh"), 0o644)) // same inode, now larger
	_, err = io.ReadAll(r)
	assert.ErrorIs(t, err, ErrTooLarge)
}

func TestSize(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "64 KiB", Size(64<<10))
	assert.Equal(t, "1 GiB", Size(1<<30))
	assert.Equal(t, "16 MiB", Size(16<<20))
	assert.Equal(t, "100 bytes", Size(100))
}

// FuzzReadFile checks that the bounded reader returns exactly the file's bytes when
// they fit the limit and ErrTooLarge when they do not, whatever the content.
func FuzzReadFile(f *testing.F) {
	f.Add([]byte("{\"pipeline_id\":\"1\"}\n"), uint16(64))
	f.Add([]byte{}, uint16(0))
	f.Add(bytes.Repeat([]byte{0}, 300), uint16(299))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte, limit uint16) {
		path := filepath.Join(dir, "f")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Skip()
		}
		got, err := ReadFile(path, Kind{"fuzzed file", int64(limit)})
		switch {
		case len(data) > int(limit):
			if !errors.Is(err, ErrTooLarge) {
				t.Fatalf("%d bytes under a %d limit: got %v, want ErrTooLarge", len(data), limit, err)
			}
		case err != nil:
			t.Fatalf("%d bytes under a %d limit: %v", len(data), limit, err)
		case !bytes.Equal(got, data):
			t.Fatalf("read %q, wrote %q", got, data)
		}
	})
}
