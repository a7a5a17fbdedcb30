// Package agent runs one dispatch through an agent and records its response (SPEC §5).
//
// An Agent turns a Request (a dispatch file already written) into a Response: a shell
// command run with the agent protocol (pointer prompt on stdin, REPLAY_* environment,
// stdout as the response, exit status as the outcome), the deterministic simulated
// agent builtin:sim, or the offline agent "recorded". A Runner puts a Store of
// recorded responses in front of any Agent: it looks the dispatch's key up first and
// reuses a hit, so live and replayed work take one code path and a recorded response
// is the mock.
//
// Outcomes of a command agent: exit 0 is completed (with empty or blank stdout too:
// summary "(no output)", reason "agent printed nothing"); another exit status or a
// signal is failed, with the last stderr line in the reason; a timeout or a cancelled
// context is error. The agent runs in its own process group, killed as a whole on
// timeout and as soon as the agent exits. Stdout beyond MaxOutputBytes is read and
// counted but not kept; stderr goes to <dispatchDir>/agent-logs/<seq>-<template>.stderr.log.
//
// Recordings live in <dispatchDir>/responses/<key>.json (written atomically). Every
// live response is recorded; a live Runner reuses completed ones only (a recorded
// failure is tried again), the recorded agent reuses all of them.
//
// The package runs and records one dispatch; it must not write manifest lines, pick
// seqs, or decide what the pipeline does next (the re-dispatch loop in redispatch does).
// It must not import cobra or huh nor write to os.Stdout; clocks are injected.
package agent
