//go:build unix

package testtools

import "syscall"

// Mkfifo makes a FIFO at path with mode, for tests of what replay does when a
// run's file is one.
func Mkfifo(path string, mode uint32) error { return syscall.Mkfifo(path, mode) }
