package store

// SetListLimits lowers the listing bounds for a test and returns the restore.
func SetListLimits(keys, bytes int) func() {
	k, b := maxListKeys, maxListBytes
	maxListKeys, maxListBytes = keys, bytes
	return func() { maxListKeys, maxListBytes = k, b }
}
