// Package redispatch re-executes a pipeline's work from its resume point through an
// agent and continues the run's manifest: each dispatch gets the next free seq,
// its manifest line is appended before its dispatch file is written, recordings
// are reused first, parallel groups run together and every outcome is reported
// to a ProgressReporter.
//
// It must not decide where a run resumes (package resume does) nor restore or
// touch checkpoints (the resume use case, package resumeflow, restores before it
// calls Run), and it never rewrites an original manifest line; it must not import
// cobra or huh nor write to os.Stdout: it takes io.Writers and a context.
package redispatch
