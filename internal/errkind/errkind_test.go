package errkind

import (
	"errors"
	"io/fs"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestKindAndWrappedErrorAreFound(t *testing.T) {
	t.Parallel()
	errBad := errors.New("bad input")
	err := Errorf(errBad, "manifest.jsonl:3: %w; fix the line", fs.ErrNotExist)
	assert.Equal(t, "manifest.jsonl:3: file does not exist; fix the line", err.Error())
	assert.ErrorIs(t, err, errBad)
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.NotErrorIs(t, err, fs.ErrPermission)

	plain := New(errBad, "100% as written")
	assert.Equal(t, "100% as written", plain.Error())
	assert.ErrorIs(t, plain, errBad)
}
