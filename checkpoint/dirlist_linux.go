package checkpoint

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"

	"golang.org/x/sys/unix"
)

// dirLister lists directories with getdents64 into a buffer it keeps: no
// os.File (whose open registers with the poller: three more syscalls a
// directory), no DirEntry and no string allocated per name.
type dirLister struct {
	buf   []byte // getdents64 records
	names []byte // the listed paths, concatenated
	offs  []listedOff
	ents  []dirEntry
}

type listedOff struct {
	start, end int
	kind       fs.FileMode
}

func newDirLister() *dirLister { return &dirLister{buf: make([]byte, 32<<10)} }

// list opens the directory abs and lists its entries but "." and "..", each name
// with its type (modeUnknown when the file system did not say). prefix is put in
// front of every name in path (one string for the whole directory). The entries
// are valid until the next list; the strings stay valid. The caller closes dir.
func (l *dirLister) list(abs, prefix string) (dir dirHandle, ents []dirEntry, err error) {
	var fd int
	for {
		fd, err = unix.Open(abs, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		return dirHandle{fd: -1}, nil, fmt.Errorf("%s: cannot list the directory: %w", abs, &fs.PathError{Op: "open", Path: abs, Err: err})
	}
	dir = dirHandle{fd: fd}
	l.names, l.offs = l.names[:0], l.offs[:0]
	for {
		n, err := unix.Getdents(fd, l.buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			dir.close()
			return dirHandle{fd: -1}, nil, fmt.Errorf("%s: cannot list the directory: %w", abs, err)
		}
		if n <= 0 {
			break
		}
		l.parse(l.buf[:n], prefix)
	}
	all := string(l.names)
	l.ents = l.ents[:0]
	for _, o := range l.offs {
		key := all[o.start+len(prefix) : o.end]
		end := o.end
		if o.kind == fs.ModeDir {
			end--
		}
		p := all[o.start:end]
		l.ents = append(l.ents, dirEntry{path: p, name: p[len(prefix):], key: key, kind: o.kind})
	}
	return dir, l.ents, nil
}

// parse appends the entries of the getdents64 records in b: u64 inode, s64 offset,
// u16 record length, u8 type, then the NUL-terminated name.
func (l *dirLister) parse(b []byte, prefix string) {
	for len(b) >= 19 {
		reclen := int(binary.NativeEndian.Uint16(b[16:18]))
		if reclen < 19 || reclen > len(b) {
			return
		}
		name := b[19:reclen]
		for i, c := range name {
			if c == 0 {
				name = name[:i]
				break
			}
		}
		typ := b[18]
		b = b[reclen:]
		if string(name) == "." || string(name) == ".." {
			continue
		}
		start := len(l.names)
		l.names = append(l.names, prefix...)
		l.names = append(l.names, name...)
		kind := direntKind(typ)
		if kind == fs.ModeDir {
			l.names = append(l.names, '/') // the sort key's; not in the path
		}
		l.offs = append(l.offs, listedOff{start: start, end: len(l.names), kind: kind})
	}
}

// direntKind is the type a getdents64 record gives (modeUnknown for DT_UNKNOWN):
// DT_* is the S_IFMT type shifted right by 12.
func direntKind(typ uint8) fs.FileMode { return kindOf(uint32(typ) << 12) }

// dirHandle is a directory open for statAt.
type dirHandle struct{ fd int }

func (d dirHandle) close() {
	if d.fd >= 0 {
		unix.Close(d.fd)
	}
}
