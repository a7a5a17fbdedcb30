//go:build !race

package heapshape

const raceEnabled = false
