package platform

import (
	"io/fs"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDescribeMode(t *testing.T) {
	t.Parallel()
	for m, want := range map[fs.FileMode]string{
		0o644:                             "a regular file",
		fs.ModeSymlink:                    "a symbolic link",
		fs.ModeDir:                        "a directory",
		fs.ModeNamedPipe:                  "a FIFO (named pipe)",
		fs.ModeSocket:                     "a socket",
		fs.ModeDevice | fs.ModeCharDevice: "a character device",
		fs.ModeDevice:                     "a block device",
		fs.ModeIrregular:                  "not a plain file (mode ?---------)",
	} {
		assert.Equal(t, want, DescribeMode(m))
	}
}
