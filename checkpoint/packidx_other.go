//go:build !linux

package checkpoint

// openIdx reads and decodes a pack index.
func openIdx(path string) (packIndex, error) { return readIdx(path) }
