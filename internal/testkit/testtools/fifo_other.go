//go:build !unix

package testtools

import (
	"errors"
	"fmt"
)

// Mkfifo fails here: this system has no FIFOs in its file system.
func Mkfifo(path string, _ uint32) error {
	return fmt.Errorf("%s: %w", path, errors.ErrUnsupported)
}
