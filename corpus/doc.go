// Package corpus runs one mutation as a replicated A/B replay (package replicate)
// over many recorded pipelines, one after the other in a fixed order, and sums
// them up: one row per pipeline and one aggregate row with pooled pass rates, a
// count of decisions and an overall decision by a stated rule.
//
// Every finished pipeline is appended at once to a log in the output directory,
// so a killed corpus run, started again with the same arguments, skips what it
// finished; a log written with other arguments is refused, never mixed.
//
// It must not import cobra or huh nor write to os.Stdout: the caller passes the
// function that replays one pipeline and prints the Result.
package corpus
