// Package gitcheck is the one harness that compares a repository as the git
// binary sees it with the same repository as go-git sees it. Tests of replay's
// own git plumbing (pack writer and reader, index encoder and decoder, loose
// objects, commit walk, checkpoint trees, bundles) run it on what they wrote.
//
// For a repository it checks that
//   - git fsck --strict passes;
//   - git and go-git see the same refs (HEAD included);
//   - git rev-list --all and a go-git walk from every ref find the same commits
//     with the same trees;
//   - git cat-file --batch-all-objects and go-git's object iterator find the same
//     objects with the same types and sizes;
//   - every tree object has the same entries (mode, type, id, name) for git
//     (git diff-tree from the empty tree) and go-git: each tree is listed once,
//     which together is the recursive listing of every commit's tree.
//
// For an index file it checks that git ls-files --stage agrees with go-git's
// index decoder, entry by entry (mode, id, stage, skip-worktree, name).
//
// A mismatch is reported as a readable diff: the lines only git printed, marked
// "-git", and the lines only go-git gave, marked "+go-git".
//
// The package is test support: only _test.go files import it. It finds git with
// internal/testkit/testtools, so REPLAY_REQUIRE_GIT=1 turns a missing git binary into a
// failure; otherwise the checks that need git are left out, and the calling test
// decides whether that is a skip (testtools.Git) or fine (its own checks run).
package gitcheck
