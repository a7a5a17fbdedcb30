//go:build !linux

package testtools

// memoryDir reports no memory file system outside Linux: tests keep the default
// temp dir.
func memoryDir() (string, bool) { return "", false }
