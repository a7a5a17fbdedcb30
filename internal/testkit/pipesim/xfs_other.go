//go:build !unix

package pipesim

import "os"

// xReadFile is os.ReadFile (see xfs_unix.go).
func xReadFile(path string) ([]byte, error) { return os.ReadFile(path) }

// xWriteFile is os.WriteFile.
func xWriteFile(path string, data []byte, perm os.FileMode) error {
	return os.WriteFile(path, data, perm)
}

// xAppendFile appends data to path, made when it is not there.
func xAppendFile(path string, data []byte, perm os.FileMode) error {
	return xWrite(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, data, perm)
}

// xWFile is a file opened for writing.
type xWFile struct{ f *os.File }

// xCreate opens a new file at path (an error wrapping os.ErrExist when there
// is one).
func xCreate(path string, perm os.FileMode) (xWFile, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	return xWFile{f}, err
}

// Write writes all of data.
func (f xWFile) Write(data []byte) error {
	_, err := f.f.Write(data)
	return err
}

func (f xWFile) Close() error { return f.f.Close() }

func xWrite(path string, flag int, data []byte, perm os.FileMode) error {
	f, err := os.OpenFile(path, flag, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
