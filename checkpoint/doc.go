// Package checkpoint is the shadow checkpoint repository of a project: a bare git
// directory outside the project whose commits are snapshots of the whole working tree.
// It creates checkpoints, lists and correlates them by reason, and restores one
// behind a branch guard, a confirmation and a safety checkpoint.
//
// go-git opens the shadow and project repositories, reads their references and
// reads every object the own plumbing does not (deltified ones, from packs git
// made). The hot paths are the project's own plumbing (docs/git-plumbing.md), because a
// first checkpoint of 100,000 files took 24.7 s through go-git's object writer and
// 8.1 s through them: a snapshot's new small objects go into one pack written here
// (pack.go: version 2 pack and index, read back through internal/gitrepo's pack
// reader), with a stat cache (cache.go, git's index idea: unchanged files are not
// read again) and a tree cache (treecache.go, git's cache-tree) so unchanged
// directories are not hashed again; large files go out as loose objects, streamed;
// the project's refs and index are written by internal/gitrepo under git's lock
// protocol. File contents are never held whole in memory. Replay
// processes that change one project are serialised by a lock file in the shadow
// directory (AcquireLock). It must never write into the project's .git directory
// except the project branch, the index, the refs/replay/pre-restore/<session> and
// refs/replay/index/<session> refs and the objects of the saved index during a
// confirmed restore, refs and the index always under git's lock protocol; it must
// not use go-git's Worktree.Checkout or Reset (they delete ignored files), import
// cobra or huh, or write to os.Stdout. It must not import manifest or the use-case
// packages: what a restore needs of the pipeline marker comes as a Marker.
package checkpoint
