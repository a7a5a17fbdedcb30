// Package resume decides where a crashed pipeline resumes and orchestrates the
// resume: it builds the phase map from the manifest and the dispatch files, places
// boundaries (phase starts, waves) against checkpoints, verifies the artifacts of
// completed work, correlates the checkpoint, reconstructs the orchestrator's state
// and hands off or re-dispatches.
//
// It orchestrates the manifest, checkpoint and report packages; it must not import
// cobra or huh nor write to os.Stdout: it takes io.Writers, a Prompter-like
// confirmation function and a Now clock.
package resume
