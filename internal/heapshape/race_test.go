//go:build race

package heapshape

const raceEnabled = true
