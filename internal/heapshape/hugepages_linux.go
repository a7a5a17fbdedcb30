package heapshape

import (
	"syscall"
	"unsafe"
)

// madvHugepage is MADV_HUGEPAGE.
const madvHugepage = 14

// adviseHugePages makes the runtime map mappedBytes of heap in one piece and gives
// the heap arenas holding it MADV_HUGEPAGE. The parts of those arenas still only
// reserved take the advice too, but lose it when the runtime maps them later.
func adviseHugePages() bool {
	span := make([]byte, mappedBytes)
	start := uintptr(unsafe.Pointer(unsafe.SliceData(span)))
	from := start &^ (arenaBytes - 1)
	to := (start + mappedBytes + arenaBytes - 1) &^ (arenaBytes - 1)
	_, _, errno := syscall.Syscall(syscall.SYS_MADVISE, from, to-from, madvHugepage)
	// ENOMEM: part of the range is neither mapped nor reserved; the rest took it.
	return errno == 0 || errno == syscall.ENOMEM
}
