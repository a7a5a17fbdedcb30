// Package gitrepo is replay's own git plumbing for the places where go-git's is too
// slow or does not do what git does, under one contract: it reads and writes git's
// on-disk formats exactly as the git binary does (checked against `git fsck
// --strict`, `git cat-file` and go-git in its tests), and leaves everything else to
// go-git.
//
// What it reads with its own code:
//   - pack indexes (PackIndex, version 2, looked up in place) and whole undeltified
//     pack entries: ReadPackEntryHeader, OpenPackEntry (streamed, for the
//     checkpoint store's blobs) and the commit reader of a history walk. There is one
//     inflater (inflate: the standard library's compress/zlib, as go-git uses); a
//     delta entry (a pack `git gc` made) is never read here but handed to go-git
//     (ErrDeltaEntry, errNotLean);
//   - the commit walk by commit time (WalkByCommitTime), in go-git's order, which
//     reads commits stored whole in a pack through the lean reader and leaves
//     everything else (loose objects, deltas, signatures) to go-git;
//   - the index file (ReadIndex, DecodeIndex), as go-git's IndexStorage reads it.
//
// What it writes, and nothing else:
//   - refs and the index, under git's own lock protocol (<file>.lock created
//     exclusively, then renamed; see WriteRef and LockedError). The only lock it ever
//     removes is one a replay process left behind when killed (stalelock.go: its
//     intent file names a pid that no longer runs and the lock is the one it made);
//   - the index's bytes (WriteIndex: versions 2 and 3 encoded exactly as go-git's
//     encoder does, in one buffer; any other index is encoded by go-git);
//   - loose objects under objects/ (LooseObjects, for agent effects and checkpoints'
//     objects); an object already there is only ever replaced by the same object.
//     One pool of BestSpeed zlib writers (ZlibWriter) serves these and the checkpoint
//     store's packs.
//
// What it leaves to go-git: opening repositories (Open adds what PlainOpen lacks:
// objects reachable through objects/info/alternates, as an A/B replay worktree
// shares the project's objects), references other than those above, deltified
// objects, object parsing beyond commits, trees and diffs, and every repository
// replay does not write to. docs/git-plumbing.md says where each piece is used and
// what it gained.
package gitrepo
