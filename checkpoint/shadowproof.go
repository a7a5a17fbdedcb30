package checkpoint

import (
	"errors"
	"fmt"
	"path/filepath"
)

// ShadowDir is a shadow checkpoint directory CheckShadowDir passed, by its
// absolute path. OpenShadow, OpenOrInit and LockShadow take it instead of a
// path, so a command checks its shadow once and hands the proof to every reader
// and writer after it, and none of them can be given a directory no check passed.
// The zero value is no directory: they refuse it.
type ShadowDir struct{ abs string }

// ProveShadowDir checks shadowDir with CheckShadowDir and returns the proof.
func ProveShadowDir(shadowDir string) (ShadowDir, error) {
	abs, err := filepath.Abs(shadowDir)
	if err != nil {
		return ShadowDir{}, fmt.Errorf("shadow directory %s: %w", shadowDir, err)
	}
	if err := CheckShadowDir(abs); err != nil {
		return ShadowDir{}, err
	}
	return ShadowDir{abs}, nil
}

// Checked reports whether d is a directory a check passed (not the zero value).
func (d ShadowDir) Checked() bool { return d.abs != "" }

// path is the checked directory's absolute path; the zero value is an error.
func (d ShadowDir) path() (string, error) {
	if d.abs == "" {
		return "", errors.New("shadow directory: not checked (checkpoint.ProveShadowDir first)")
	}
	return d.abs, nil
}
