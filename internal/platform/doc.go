// Package platform is the seam between replay and the operating system: the few
// things POSIX systems, macOS and Windows do differently, each behind one small
// function with a file per system (stat_*.go, lock_*.go, nofollow_*.go, proc_*.go).
//
//   - FileStat: a file's device, inode, owner and status change time (ctime), as
//     the git index records them; Linux and the BSDs name the ctime field
//     differently, Windows has none of them (ok is false).
//   - Lock, TryLock, LockShared, Unlock: flock(2) advisory locks. Windows has no
//     flock; there they return an error wrapping ErrUnsupported, so a command that
//     needs a lock refuses instead of writing unlocked.
//   - ONoFollow, OpenNoFollow, OpenInRootNoFollow: opens that never follow a
//     symbolic link in the last component. Windows has no O_NOFOLLOW: there a read
//     is checked after the open (the handle must be the file Lstat saw, not a link),
//     a write that creates exclusively (O_EXCL) is safe as is, and any other write
//     is refused with an error wrapping ErrUnsupported.
//   - ProcessAlive: whether a process id still runs.
//   - TieToParent, KillProcessGroup: a child in its own process group, killed
//     with all its descendants; on Windows only the child itself is killed.
//
// docs/platforms.md lists what each system guarantees. The package knows nothing
// of replay and imports no other package of the project.
package platform
