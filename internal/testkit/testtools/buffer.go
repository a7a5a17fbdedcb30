package testtools

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer that one goroutine (a renderer, a child process's
// output copier) may write while the test reads it.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Close does nothing, so a Buffer can stand where a stream's io.WriteCloser goes.
func (b *Buffer) Close() error { return nil }
