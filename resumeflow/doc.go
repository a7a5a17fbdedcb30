// Package resumeflow is the resume as one use case, read top to bottom: load the
// run, decide where it resumes, guard (the project's replay lock, no agent of a
// dead replay still writing, the preflight), restore behind the branch guard and
// a safety checkpoint, re-dispatch the work from the resume point through an
// agent, or hand it off to the pipeline's orchestrator when there is none.
//
// Run is the one entry point the command, the MCP server and the tests call
// alike; what it needs from the outside world (clock, prompter, printer, log and
// progress, the agent, the environment's directories) comes in as values in
// Deps. Decide, Preflight and Redispatch are its steps, exported for the other
// use cases of the command layer (plan, status, A/B replays, forks) that share
// them.
//
// It must not print the result (the command layer does), parse flags, import
// cobra or huh, or write to os.Stdout; it never rewrites an original manifest
// line (package redispatch appends, package resume restores).
package resumeflow
