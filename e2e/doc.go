// Package e2e drives the built replay binary as a user would: it builds the binary
// once in TestMain and asserts on exit codes, stdout, stderr and files. It keeps
// only what needs a real process: version, help and a usage error's exit code, the
// demo's pasted follow-up commands, kill -9 and crash loops, terminal (PTY)
// prompts, peak memory, two processes racing for one project, concurrent manifest
// appends, a TZ-dependent plan, a symlinked working directory and the corpus (whose
// build scripts call the binary). Every other end-to-end test runs the same
// commands in process, in cmd/replay/internal/cli (package cli_test). It holds tests only.
package e2e
