// Package report renders what replay decided and did: the "Replay Plan (dry-run)"
// markdown, the --explain listing, the replay diff (markdown and JSONL) and the
// terminal and markdown tables they use.
//
// It renders plain data it is given; it must not read pipeline files, decide
// anything, or import the resume package (data flows resume → report).
package report
