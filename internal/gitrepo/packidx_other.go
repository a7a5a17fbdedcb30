//go:build !linux

package gitrepo

// OpenPackIndex reads the pack index at path and checks it.
func OpenPackIndex(path string) (*PackIndex, error) { return readPackIndex(path) }
