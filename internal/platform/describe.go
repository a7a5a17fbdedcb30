package platform

import "io/fs"

// DescribeMode says what a file of mode m is, in words ("a regular file", "a
// FIFO (named pipe)"): the one wording of both doors' refusals.
func DescribeMode(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO (named pipe)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "not a plain file (mode " + m.String() + ")"
}
