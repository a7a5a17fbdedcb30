//go:build !linux

package runfile

// readListedRing reads nowhere but on Linux: false, nothing was read.
func readListedRing(*Heads, []string, int, func(int, []byte, error)) bool { return false }
