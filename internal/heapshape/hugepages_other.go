//go:build !linux

package heapshape

// adviseHugePages does nothing off Linux.
func adviseHugePages() bool { return false }
