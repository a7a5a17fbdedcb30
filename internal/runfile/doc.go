// Package runfile opens the files of a pipeline run for reading. A run's files are
// untrusted: a marker may be a FIFO that never delivers a byte, a symlink to
// /dev/zero that never ends, or a manifest of many gigabytes. Every read of a run's
// file goes through this package, which opens it once without blocking, checks that
// it is a regular file, and stops reading at a limit chosen per kind of file, with an
// error that names the file, its kind and the limit. The heads of many listed files
// of one directory are read through a descriptor of the directory where the system
// has one (openat), one file at a time.
//
// It knows nothing of what the files hold and must not import any other package of
// the project but internal/platform (the system's no-follow open).
package runfile
