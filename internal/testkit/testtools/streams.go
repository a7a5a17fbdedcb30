package testtools

import (
	"bytes"

	"github.com/replaytool/replay/internal/iostreams"
)

// Streams returns streams backed by buffers: stdin, stdout and stderr, in that
// order. None of them is a terminal and the environment they read is empty.
func Streams() (*iostreams.IOStreams, *bytes.Buffer, *bytes.Buffer, *bytes.Buffer) {
	in, out, errOut := &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	ios := &iostreams.IOStreams{In: in, Out: out, ErrOut: errOut}
	ios.SetEnv(func(string) string { return "" })
	return ios, in, out, errOut
}
