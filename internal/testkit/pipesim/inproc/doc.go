// Package inproc runs the end-to-end crash simulator (pipesim.XRunSeed) with
// replay in process: each resume goes through the product's own resume use case
// (redispatch.Resume, fed as cmd/replay's resume command feeds it) with the
// simulated agent as an agent.Agent, instead of a replay process per resume and
// a simagent process per re-dispatched work item. The e2e test
// TestSimCrashEquivalence runs its bulk of seeds here and a subset through the
// built binary, so the command line stays proven.
//
// Only the simulator's driving lives here: the scenario, the crashes, the
// continuation and the end-state oracle stay in internal/testkit/pipesim, which imports
// none of replay's code. This package must not decide anything the product
// decides: it passes the product's answers through, as the binary's JSON would.
package inproc
