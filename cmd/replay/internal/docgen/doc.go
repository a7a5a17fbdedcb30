// Command docgen writes replay's command reference from its cobra command tree:
// one markdown page per command into docs/reference and one man page per command
// into docs/man. The output depends on the command tree alone (no date, no host,
// no environment), so running it twice gives the same bytes and the test beside it
// fails when the committed pages no longer match the commands.
//
// Run it from the repository root after changing a command, a flag or a help text:
//
//	go run ./cmd/replay/internal/docgen
//
// or through go generate, from anywhere:
//
//	go generate ./cmd/replay/internal/docgen
//
// It writes only under the directory given with -out (default docs), and replaces
// the generated files there: a page of a command that no longer exists is removed.
//
//go:generate go run . -out ../../../../docs
package main
