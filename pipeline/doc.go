// Package pipeline loads a crashed pipeline's run from disk, read-only: it locates
// the run's scratch, shadow and project directories once (Locator), joins the
// manifest with the dispatch files into Dispatches, opens the project and the
// shadow checkpoint repository, chooses the pipeline profile, and reads the
// orchestrator's state files (handoff, compression state, build mode), the plan's
// task texts and the project's commit windows.
//
// It must not decide anything about a resume (boundaries, verification, plans
// belong to package resume), must not change anything on disk, and must not
// import cobra or huh nor write to os.Stdout: problems become Warnings.
package pipeline
