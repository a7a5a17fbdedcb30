// Package gitrepo opens git working trees with go-git the way the git binary does in
// one respect go-git's PlainOpen does not: objects reachable only through
// objects/info/alternates (an A/B replay worktree shares the project's objects that
// way) resolve.
//
// It only opens repositories; it must not change them.
package gitrepo
