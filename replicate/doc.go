// Package replicate runs replicated A/B replays: the baseline arm (the dispatches a
// mutation would change, replayed live with their bodies as recorded) and the
// mutated arm, each several times from the same checkpoint in its own isolated
// worktree (ab.Run per replica), optionally a check command in each replica's
// worktree, then per-replica metrics, statistics (package stats), the noise floor
// of the baseline against itself and a decision by a printed rule.
//
// It must not import cobra or huh nor write to os.Stdout: the caller passes the
// A/B replay's functions and prints the Result.
package replicate
