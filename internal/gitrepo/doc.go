// Package gitrepo opens git working trees with go-git the way the git binary does in
// one respect go-git's PlainOpen does not: objects reachable only through
// objects/info/alternates (an A/B replay worktree shares the project's objects that
// way) resolve.
//
// It also writes the two files replay changes in a project's .git directory, refs and
// the index, under git's own lock protocol (see WriteRef). It must not change
// anything else.
package gitrepo
