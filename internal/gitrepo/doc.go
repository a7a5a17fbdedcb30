// Package gitrepo opens git working trees with go-git the way the git binary does in
// one respect go-git's PlainOpen does not: objects reachable only through
// objects/info/alternates (an A/B replay worktree shares the project's objects that
// way) resolve.
//
// It also writes what replay changes in a project's .git directory: refs and the
// index, under git's own lock protocol (see WriteRef; a lock replay left behind
// when killed is the only one it removes), and loose objects, new ones under
// objects/ (see LooseObjects, which the objects restored with an agent's recorded
// effects and checkpoints' objects are written through; an object already there is
// only ever replaced by the same object). It must not change anything else.
package gitrepo
