// Package fsutil holds the two crash-safe ways replay writes files: appending one
// line to a shared log (a single O_APPEND write under an exclusive flock, fsync'd),
// and replacing a file whole (temp file, fsync, rename).
//
// It knows nothing of what the files hold; it must not import any other package of
// the project.
package fsutil
