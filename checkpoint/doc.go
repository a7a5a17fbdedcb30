// Package checkpoint is the shadow checkpoint repository of a project: a bare git
// directory outside the project whose commits are snapshots of the whole working tree.
// It creates checkpoints, lists and correlates them by reason, and restores one
// behind a branch guard, a confirmation and a safety checkpoint.
//
// Everything is built on go-git's object plumbing with an mtime/size cache and
// parallel file IO; file contents are streamed, never held whole in memory. Replay
// processes that change one project are serialised by a lock file in the shadow
// directory (AcquireLock). It must never write into the project's .git directory
// except the project branch, the index, the refs/replay/pre-restore/<session> and
// refs/replay/index/<session> refs and the objects of the saved index during a
// confirmed restore, refs and the index always under git's lock protocol; it must
// not use go-git's Worktree.Checkout or Reset (they delete ignored files), import
// cobra or huh, or write to os.Stdout. It must not import manifest or the use-case
// packages: what a restore needs of the pipeline marker comes as a Marker.
package checkpoint
