// Package fork makes child runs of a pipeline run: a fork at a seq shares its
// parent's dispatches below that seq by reference (a lineage record names the
// parent and the fork seq; nothing of the parent is copied), substitutes recorded
// responses for chosen seqs, and starts its working tree from the checkpoint in
// effect at the fork seq in an isolated worktree. It also reads the tree of runs
// of a pipeline (original, resumes, A/B sessions, forks) and the entries of any
// run of that tree, for the comparison of two runs.
//
// It must never write a file of a parent run (its manifest, dispatch files,
// recordings, project or shadow repository); everything a fork writes lives in
// its own directory. It must not import cobra or huh nor write to os.Stdout.
package fork
