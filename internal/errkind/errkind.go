// Package errkind builds the errors domain packages hand to people: a message shown
// exactly as written (what, where and what to do) that also carries a kind, a
// sentinel error the domain package declares (manifest.ErrNoManifest,
// checkpoint.ErrRefused). errors.Is finds the kind and any error wrapped with %w.
//
// It knows nothing of exit codes or commands: the command layer (cmd/replay/internal/cli) maps kinds to exit codes
// in one place. It must not import any other package of this module.
package errkind

import "fmt"

// New returns an error whose message is msg and whose kind is kind.
func New(kind error, msg string) error {
	return &kindError{kind: kind, err: fmt.Errorf("%s", msg)}
}

// Errorf returns an error of kind kind whose message is fmt.Errorf(format, args...);
// an error wrapped with %w stays reachable through errors.Is and errors.As.
func Errorf(kind error, format string, args ...any) error {
	return &kindError{kind: kind, err: fmt.Errorf(format, args...)}
}

// kindError is a message with a kind.
type kindError struct {
	kind error
	err  error
}

func (e *kindError) Error() string   { return e.err.Error() }
func (e *kindError) Unwrap() []error { return []error{e.kind, e.err} }
