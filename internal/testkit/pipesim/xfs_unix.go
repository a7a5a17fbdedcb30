//go:build unix

package pipesim

import (
	"os"
	"sync"
	"syscall"
)

// The simulator's own file reads and writes, straight through the system
// calls: os.Open of a regular file also asks for non-blocking mode and tries
// to register the descriptor with the poller (five calls more per file), and
// the simulator opens thousands of small files per seed. What they read and
// write is the same bytes as os.ReadFile, os.WriteFile and an O_APPEND write.

// xOpen opens path, retried on EINTR.
func xOpen(path string, flag int, perm uint32) (int, error) {
	for {
		fd, err := syscall.Open(path, flag|syscall.O_CLOEXEC, perm)
		if err != syscall.EINTR {
			if err != nil {
				return -1, &os.PathError{Op: "open", Path: path, Err: err}
			}
			return fd, nil
		}
	}
}

// xReadFile is os.ReadFile. It reads into a pooled buffer and returns a copy
// of exactly the bytes read: the file's size need not be asked first (an
// fstat per file; the simulator's files are a few kilobytes).
func xReadFile(path string) ([]byte, error) {
	fd, err := xOpen(path, syscall.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	bp := xReadBufs.Get().(*[]byte)
	defer xReadBufs.Put(bp)
	buf := (*bp)[:0]
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			if cap(buf) <= xReadBufMax {
				*bp = buf
			}
			return append(make([]byte, 0, max(len(buf), 1)), buf...), nil
		}
		buf = buf[:len(buf)+n]
	}
}

// xReadBufs are xReadFile's buffers, kept up to xReadBufMax.
var xReadBufs = sync.Pool{New: func() any { b := make([]byte, 0, 32<<10); return &b }}

const xReadBufMax = 1 << 20

// xWFile is a file opened for writing.
type xWFile struct {
	fd   int
	path string
}

// xCreate opens a new file at path (an error wrapping os.ErrExist when there
// is one).
func xCreate(path string, perm os.FileMode) (xWFile, error) {
	fd, err := xOpen(path, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL, uint32(perm.Perm()))
	return xWFile{fd, path}, err
}

// Write writes all of data.
func (f xWFile) Write(data []byte) error {
	for len(data) > 0 {
		n, err := syscall.Write(f.fd, data)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return &os.PathError{Op: "write", Path: f.path, Err: err}
		}
		data = data[n:]
	}
	return nil
}

func (f xWFile) Close() error {
	if err := syscall.Close(f.fd); err != nil {
		return &os.PathError{Op: "close", Path: f.path, Err: err}
	}
	return nil
}

// xWrite opens path with flag and writes data.
func xWrite(path string, flag int, data []byte, perm os.FileMode) error {
	fd, err := xOpen(path, flag, uint32(perm.Perm()))
	if err != nil {
		return err
	}
	f := xWFile{fd, path}
	err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// xWriteFile is os.WriteFile.
func xWriteFile(path string, data []byte, perm os.FileMode) error {
	return xWrite(path, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_TRUNC, data, perm)
}

// xAppendFile appends data to path, made when it is not there.
func xAppendFile(path string, data []byte, perm os.FileMode) error {
	return xWrite(path, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_APPEND, data, perm)
}
