// Package manifest reads and writes the on-disk records of a disk-mediated dispatch
// pipeline: manifest.jsonl (tolerantly), the .pipeline-active marker in its three
// shapes, .dispatch-active-<sid>, receipt-ledger.jsonl and dispatch file audit
// headers; it resolves a user's PATH to a manifest and appends entries atomically.
//
// It must not know about phases, checkpoints or resume decisions, and must not
// import cobra, huh or write to os.Stdout: callers pass io.Writers.
package manifest
