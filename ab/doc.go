// Package ab runs A/B replays: the work from a pipeline's replay point re-dispatched
// with prompt-template mutations in an isolated git worktree (Run), and the
// comparison of a replay session with the original run (Compare, CompareSession),
// its artifact diff (ArtifactDiff, a bounded edit distance over lines) and the
// replay-diff records beside the manifest.
//
// It must never touch the user's working tree, branch or original manifest lines;
// it must not import cobra or huh nor write to os.Stdout: it reports through the
// Request's functions and returns a Result for the caller to print.
package ab
