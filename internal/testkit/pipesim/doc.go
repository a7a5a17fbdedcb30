// Package pipesim is a pipeline simulator with ground truth: from a seed it writes
// a complete crashed run of an upstream Crucible pipeline (build, debugging,
// siege, quality-gate, or a skill replay has no profile for) exactly as upstream's
// tools write it, and returns what is true about that run by construction: which
// dispatches' work is on disk, the latest provable resume boundary, the work items
// to redo, the next free seq, and every ambiguity it introduced on purpose with the
// boundaries that ambiguity may legitimately move a resume back to.
//
// The files are written through their formats only: manifest lines byte-compatible
// with upstream's scripts/dispatch.py (compact JSON, ensure_ascii off, summaries
// shrunk to fit PIPE_BUF), dispatch files with the 4-line audit header, the
// receipt ledger, the .pipeline-active marker, the shadow checkpoint repository
// (core.worktree = the project, subjects "<reason> | <local time> | <source>",
// rows-only checkpoint-manifest.md) and the project repository, whose commits
// carry the local time of a random zone.
//
// The package must not import any of replay's own packages (it is the oracle the
// resume decision is tested against, so its truth must never come from the code
// under test); it uses the standard library and go-git's object storage only.
package pipesim
