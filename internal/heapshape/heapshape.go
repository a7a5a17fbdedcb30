package heapshape

import (
	"syscall"
	"unsafe"
)

const (
	// arenaBytes is the runtime's heap arena size on 64-bit Linux (heapArenaBytes):
	// the heap is reserved and grown inside 64 MiB-aligned arenas.
	arenaBytes = 64 << 20
	// mappedBytes is how much heap the init makes the runtime map at once: more than
	// a read-only command allocates, so its heap grows inside the advised range.
	mappedBytes = 48 << 20
	// ballastBytes is the floor under the collector's goal: about twice that much
	// heap before the first collection after start.
	ballastBytes = 32 << 20
)

// Advised reports whether the init gave the heap huge-page advice: false when
// GODEBUG turned it off, off Linux, or when the kernel refused it.
var Advised bool

// ballast is allocated once and never read or written: it only counts in the live
// heap the collector paces itself by.
var ballast []byte

func init() {
	if unsafe.Sizeof(uintptr(0)) < 8 || addressSpaceLimited() {
		// 80 MiB more of address space could cross the limit, and the runtime dies
		// on a failed allocation; 32-bit heap arenas are not 64 MiB either.
		return
	}
	// The ballast first: placed before the mapped span, it leaves that span whole
	// for the command's own allocations once the span is garbage.
	if !set("GOGC") && !set("GOMEMLIMIT") {
		ballast = make([]byte, ballastBytes)
	}
	if !godebug("disablethp", "1") {
		Advised = adviseHugePages()
	}
}

// Ballast reports the size of the ballast the init allocated (0: none).
func Ballast() int { return len(ballast) }

// addressSpaceLimited reports whether the process's address space is limited
// (ulimit -v): the ballast and the mapped span take address space, not memory.
func addressSpaceLimited() bool {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &lim); err != nil {
		return true
	}
	return lim.Cur != rlimInfinity
}

// rlimInfinity is RLIM_INFINITY, "no limit".
const rlimInfinity = ^uint64(0)

// set reports whether the environment variable name is set, even to nothing.
func set(name string) bool {
	_, ok := syscall.Getenv(name)
	return ok
}

// godebug reports whether GODEBUG sets key to value, the last setting of key
// winning, as in the runtime. It scans GODEBUG by hand: importing strings would
// initialise this package later, after the libraries' inits.
func godebug(key, value string) bool {
	v, _ := syscall.Getenv("GODEBUG")
	match, start := false, 0
	for i := 0; i <= len(v); i++ {
		if i < len(v) && v[i] != ',' {
			continue
		}
		if kv := v[start:i]; len(kv) > len(key) && kv[:len(key)] == key && kv[len(key)] == '=' {
			match = kv[len(key)+1:] == value
		}
		start = i + 1
	}
	return match
}
