// Package safewrite holds the crash-safe ways replay writes files: appending one line
// to a shared log (a single O_APPEND write under an exclusive flock, fsync'd), and
// replacing a file whole (temp file, fsync, rename). Every write is confined to its
// directory: it goes through an os.Root, directories on the way are checked with
// Lstat to be real directories and files are opened with O_NOFOLLOW, so a symbolic
// link planted in a run never redirects a write.
//
// It knows nothing of what the files hold; it must not import any other package of
// the project.
package safewrite
