// Package exitcode is the one place where errors become process exit codes.
//
// Domain packages wrap the sentinel errors declared here with %w; only the command
// layer calls Of to turn an error into a code. It must not import anything but the
// standard library.
package exitcode
