// Package manifest reads and writes the on-disk records of a disk-mediated dispatch
// pipeline: manifest.jsonl (tolerantly), the .pipeline-active marker in its three
// shapes, .dispatch-active-<sid>, receipt-ledger.jsonl and dispatch file audit
// headers; it resolves a user's PATH to a manifest and appends entries atomically.
//
// # Reading a line
//
// A manifest line is read as encoding/json reads a JSON object (strings and their
// escapes, escaped keys, duplicate keys: the last wins), with these rules for its
// known fields, where damaged or hand-written manifests differ from the format:
//
//   - seq: a whole number (2.0 and 2e0 are 2) from 0 to SeqLimit; required.
//   - status: a string naming a known status; required.
//   - file, role, phase, summary, model_tier, replay_session, mutation: a string,
//     null, or a number or boolean read as its text (phase 3 is "3"). An empty
//     phase ("phase":"") is read as null, as a pipeline writes it before a phase
//     is known; every other empty string stays an empty string.
//   - task: a whole number, null, or a string holding a whole number; the strings
//     "", "null" and "-" are null.
//   - input_chars, output_chars, tool_calls, replay_of: a whole number within
//     ±2^40, or null.
//   - duration_s: a finite number, or null.
//   - any other key is kept as it was written (Entry.Extra), nested at most 64 deep.
//
// TestParseLineAgreesWithEncodingJSON and FuzzParseLineAgreesWithEncodingJSON
// hold ParseLine to these rules over encoding/json.
//
// It must not know about phases, checkpoints or resume decisions, and must not
// import cobra, huh or write to os.Stdout: callers pass io.Writers.
package manifest
