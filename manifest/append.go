package manifest

// Append writes e as one line at the end of the manifest at manifestPath (created
// when missing): compact JSON in the SPEC §2 field order, one write(2) of at most
// MaxLineBytes, under an exclusive advisory lock on the file, with O_APPEND, then
// fsync'd. A torn last line is first moved to TornSidecar (see AppendEntry).
func Append(manifestPath string, e Entry) error {
	_, err := AppendEntry(manifestPath, e)
	return err
}
