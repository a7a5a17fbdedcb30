// Package resume decides where a crashed pipeline resumes and restores it: from a
// loaded pipeline (package pipeline) it places boundaries (phase starts, waves)
// against checkpoints, verifies and attributes the work of completed dispatches,
// correlates the checkpoint, builds the plan, runs the preflight, restores the
// working tree behind the branch guard (Run), reconstructs the orchestrator's state
// (CSB) and archives the markers of a fresh start.
//
// One decision: Decide (Analyze) computes the boundary, the work items
// (WorkItems: a dispatch, its replays and its retries are one item), the next seq
// and the warnings; plan, status, --json, the MCP tools and the resume render or
// execute that same Analysis. Commits are attributed by a maximum bipartite
// matching (match.go); only the run's own checkpoints are candidates.
//
// It must not run agents or append to the manifest (package redispatch does), nor
// know about A/B replays (package ab); it must not import cobra or huh nor write to
// os.Stdout: it takes io.Writers, a Prompter and a Now clock.
package resume
