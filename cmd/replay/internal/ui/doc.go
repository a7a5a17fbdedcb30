// Package ui is the one printer of the command line: it owns warnings, verbose
// detail, progress and the JSON switch, so --quiet, --verbose and --json mean the
// same on every command. It writes only to the writers it is given; domain
// packages never import it, they take an io.Writer or a small interface.
package ui
