package runfile

import (
	"errors"
	"runtime"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The io_uring ABI (linux/io_uring.h) that headRing uses: three operations,
// the rings' layout and the flags it sets.
const (
	opOpenat = 18 // IORING_OP_OPENAT, Linux 5.6
	opClose  = 19 // IORING_OP_CLOSE, Linux 5.6
	opRead   = 22 // IORING_OP_READ, Linux 5.6

	sqeHardlink    = 1 << 3 // IOSQE_IO_HARDLINK: the next one runs even if this one fails
	enterGetEvents = 1      // IORING_ENTER_GETEVENTS
	featSingleMmap = 1 << 0 // IORING_FEAT_SINGLE_MMAP, Linux 5.4
	// featNativeWorkers is IORING_FEAT_NATIVE_WORKERS, Linux 5.12: the ring is
	// used only on kernels this recent, whose reads of an O_NONBLOCK file end with
	// EAGAIN instead of waiting (a FIFO put in a listed file's place never hangs).
	featNativeWorkers = 1 << 9

	offSQRing = 0          // IORING_OFF_SQ_RING
	offSQEs   = 0x10000000 // IORING_OFF_SQES
)

// ringBatch is how many files one round of a headRing opens at once: enough to
// make the three system calls of a round cheap per file, few enough to keep the
// descriptors open at once and the buffers small.
const ringBatch = 128

// sqe is struct io_uring_sqe.
type sqe struct {
	opcode      uint8
	flags       uint8
	ioprio      uint16
	fd          int32
	off         uint64
	addr        uint64
	len         uint32
	opFlags     uint32 // open_flags for OPENAT
	userData    uint64
	bufIndex    uint16
	personality uint16
	fileIndex   uint32
	addr3       uint64
	_           uint64
}

// cqe is struct io_uring_cqe.
type cqe struct {
	userData uint64
	res      int32
	flags    uint32
}

// sqOffsets is struct io_sqring_offsets: where the submission ring's fields lie
// in its mapping.
type sqOffsets struct {
	head, tail, ringMask, ringEntries, flags, dropped, array, resv1 uint32
	userAddr                                                        uint64
}

// cqOffsets is struct io_cqring_offsets: where the completion ring's fields lie.
type cqOffsets struct {
	head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1 uint32
	userAddr                                                        uint64
}

// ringParams is struct io_uring_params.
type ringParams struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFd uint32
	resv                                                                   [3]uint32
	sqOff                                                                  sqOffsets
	cqOff                                                                  cqOffsets
}

// headRing reads the heads of many files of one directory through an io_uring:
// a round opens ringBatch files with one system call, then reads and closes them
// with another, where ReadListed spends three system calls on each file. What is
// opened and read is exactly ReadListed's.
type headRing struct {
	fd      int
	rings   []byte // the submission and completion rings, one mapping
	sqeMem  []byte
	sqes    []sqe
	sqTail  *uint32
	sqMask  uint32
	cqHead  *uint32
	cqTail  *uint32
	cqMask  uint32
	cqes    []cqe
	pending uint32 // submission entries filled since the last enter
}

// readListedRing reads the heads of names through a ring, as ReadListedAll; false
// when the kernel offers none fit for it and nothing was read.
func readListedRing(h *Heads, names []string, size int, f func(i int, head []byte, err error)) bool {
	if h.fd < 0 {
		return false
	}
	ring, err := newHeadRing(2 * ringBatch)
	if err != nil {
		return false
	}
	defer ring.close()
	ring.readHeads(h, names, size, f)
	return true
}

// errRingRefused says the kernel offers no io_uring fit for the reads here (too
// old, switched off, or filtered out); the caller reads file by file.
var errRingRefused = errors.New("io_uring refused")

// newHeadRing sets up a ring of entries submission slots.
func newHeadRing(entries uint32) (*headRing, error) {
	var p ringParams
	fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(entries), uintptr(unsafe.Pointer(&p)), 0)
	if errno != 0 {
		return nil, errRingRefused
	}
	r := &headRing{fd: int(fd)}
	if p.features&featSingleMmap == 0 || p.features&featNativeWorkers == 0 {
		r.close()
		return nil, errRingRefused
	}
	size := max(p.sqOff.array+p.sqEntries*4, p.cqOff.cqes+p.cqEntries*uint32(unsafe.Sizeof(cqe{})))
	var err error
	if r.rings, err = unix.Mmap(r.fd, offSQRing, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE); err != nil {
		r.close()
		return nil, errRingRefused
	}
	if r.sqeMem, err = unix.Mmap(r.fd, offSQEs, int(p.sqEntries)*int(unsafe.Sizeof(sqe{})), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE); err != nil {
		r.close()
		return nil, errRingRefused
	}
	base := unsafe.Pointer(unsafe.SliceData(r.rings))
	u32 := func(off uint32) *uint32 { return (*uint32)(unsafe.Add(base, off)) }
	r.sqTail, r.sqMask = u32(p.sqOff.tail), *u32(p.sqOff.ringMask)
	array := unsafe.Slice(u32(p.sqOff.array), p.sqEntries)
	for i := range array {
		array[i] = uint32(i) // ring slot i always holds entry i
	}
	r.cqHead, r.cqTail, r.cqMask = u32(p.cqOff.head), u32(p.cqOff.tail), *u32(p.cqOff.ringMask)
	r.cqes = unsafe.Slice((*cqe)(unsafe.Add(base, p.cqOff.cqes)), p.cqEntries)
	r.sqes = unsafe.Slice((*sqe)(unsafe.Pointer(unsafe.SliceData(r.sqeMem))), p.sqEntries)
	return r, nil
}

// close unmaps the rings and closes the ring.
func (r *headRing) close() {
	if r.sqeMem != nil {
		_ = unix.Munmap(r.sqeMem)
	}
	if r.rings != nil {
		_ = unix.Munmap(r.rings)
	}
	_ = unix.Close(r.fd)
}

// next returns the next free submission entry, zeroed and queued.
func (r *headRing) next() *sqe {
	i := (atomic.LoadUint32(r.sqTail) + r.pending) & r.sqMask
	r.pending++
	e := &r.sqes[i]
	*e = sqe{}
	return e
}

// submit hands the queued entries to the kernel and calls done with each
// completion, until as many have come as were queued. After an error, some may
// still complete later.
func (r *headRing) submit(done func(c cqe)) error {
	n := r.pending
	atomic.StoreUint32(r.sqTail, atomic.LoadUint32(r.sqTail)+n)
	r.pending = 0
	toSubmit := n
	for got := uint32(0); got < n; {
		sent, _, errno := unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(toSubmit), uintptr(n-got), enterGetEvents, 0, 0)
		switch {
		case errno == 0:
			toSubmit -= min(uint32(sent), toSubmit) // the rest stays queued for the next call
		case errno != unix.EINTR:
			return errno
		}
		head, tail := atomic.LoadUint32(r.cqHead), atomic.LoadUint32(r.cqTail)
		for ; head != tail; head++ {
			done(r.cqes[head&r.cqMask])
			got++
		}
		atomic.StoreUint32(r.cqHead, head)
	}
	return nil
}

// readHeads reads the head of each names[i] (at most size bytes) and calls f(i,
// head, err) with it, in order; head is valid during the call. Once the ring
// fails, every name left is read by ReadListed, into a buffer of its own (the
// kernel may still be writing into the ring's).
func (r *headRing) readHeads(h *Heads, names []string, size int, f func(i int, head []byte, err error)) {
	n := ringBatch // newHeadRing(2 * ringBatch): a read and a close a file
	bufs := make([]byte, n*size)
	var paths []byte
	fds := make([]int32, n)
	lens := make([]int32, n)
	for lo := 0; lo < len(names); lo += n {
		batch := names[lo:min(lo+n, len(names))]
		if err := r.round(h.fd, batch, size, bufs, &paths, fds, lens); err != nil {
			h.readEach(names, lo, make([]byte, size), f)
			return
		}
		for k := range batch {
			switch {
			case fds[k] < 0:
				f(lo+k, nil, openErr(-fds[k]))
			case lens[k] < 0:
				f(lo+k, nil, unix.Errno(-lens[k]))
			default:
				f(lo+k, bufs[k*size:k*size+int(lens[k])], nil)
			}
		}
	}
}

// notDone marks a descriptor or a length whose completion has not come.
const notDone = -1 << 31

// round opens the files of batch, then reads and closes those opened: fds[k] is
// the descriptor or -errno of the open, lens[k] the bytes read or -errno. An
// error means the ring itself failed (an operation it does not know, or the
// enter call) and nothing of the round is to be trusted. The descriptors it
// opened are closed, except after an enter call failed while closes were in
// flight: those are left open rather than risk closing a descriptor that
// another goroutine opened since under the same number.
func (r *headRing) round(dir int, batch []string, size int, bufs []byte, paths *[]byte, fds, lens []int32) error {
	*paths = (*paths)[:0]
	starts := make([]int, len(batch))
	for k, name := range batch {
		starts[k] = len(*paths)
		*paths = append(append(*paths, name...), 0)
	}
	for k := range batch {
		fds[k], lens[k] = notDone, notDone
		e := r.next()
		e.opcode, e.fd = opOpenat, int32(dir)
		e.addr = uint64(uintptr(unsafe.Pointer(&(*paths)[starts[k]])))
		e.opFlags = unix.O_RDONLY | unix.O_NONBLOCK | unix.O_CLOEXEC | unix.O_NOCTTY | unix.O_NOFOLLOW
		e.userData = uint64(k)
	}
	err := r.submit(func(c cqe) { fds[c.userData] = c.res })
	runtime.KeepAlive(*paths)
	refused := false
	for k := range batch {
		switch -fds[k] {
		case int32(unix.EINVAL), int32(unix.EOPNOTSUPP): // a kernel without IORING_OP_OPENAT
			refused = true
		case int32(unix.EMFILE), int32(unix.ENFILE): // too many open at once: file by file
			refused = true
		}
	}
	if err != nil || refused {
		closeOpened(fds[:len(batch)])
		return errRingRefused
	}
	for k := range batch {
		if fds[k] < 0 {
			continue
		}
		e := r.next()
		e.opcode, e.fd, e.flags = opRead, fds[k], sqeHardlink
		e.addr = uint64(uintptr(unsafe.Pointer(&bufs[k*size])))
		e.len = uint32(size)
		e.userData = uint64(k) << 1
		e = r.next()
		e.opcode, e.fd = opClose, fds[k]
		e.userData = uint64(k)<<1 | 1
	}
	// A close that ran released its descriptor even when it failed: only one
	// cancelled before it ran (its read failed to submit) is closed again here.
	cancelled := make([]bool, len(batch))
	err = r.submit(func(c cqe) {
		k := c.userData >> 1
		if c.userData&1 == 1 {
			cancelled[k] = c.res == -int32(unix.ECANCELED)
			return
		}
		lens[k] = c.res
	})
	runtime.KeepAlive(bufs)
	if err != nil {
		return errRingRefused
	}
	for k := range batch {
		if fds[k] >= 0 && cancelled[k] {
			_ = unix.Close(int(fds[k]))
		}
		if lens[k] == -int32(unix.EINVAL) || lens[k] == -int32(unix.EOPNOTSUPP) {
			err = errRingRefused // a kernel without IORING_OP_READ
		}
	}
	return err
}

// closeOpened closes the descriptors of fds whose open has completed.
func closeOpened(fds []int32) {
	for _, fd := range fds {
		if fd >= 0 {
			_ = unix.Close(int(fd))
		}
	}
}

// openErr is ReadListed's error for an open that failed with errno.
func openErr(errno int32) error {
	if unix.Errno(errno) == unix.ELOOP {
		return ErrNotRegular
	}
	return unix.Errno(errno)
}
