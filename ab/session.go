package ab

import (
	"os"
	"path/filepath"

	"github.com/replaytool/replay/pipeline"
)

// forksDir is fork.ForksDir (fork imports this package, so the name is repeated).
const forksDir = "replay-forks"

// SessionTaken reports whether the session id name is used already by pl's
// run, here or on the machine it was pulled from: the original run's
// session, a replay session of its manifest (replay_session), an A/B worktree
// or its recordings (<session>.ab), a fork (replay-forks/<session>), or a
// dispatch dir of the run in its scratch dir (crucible-dispatch-<session>,
// dispatch-<session>). A pushed run carries all of these but the worktrees
// themselves, so a replay of a pulled run never reuses an id its first
// machine gave out.
func SessionTaken(pl *pipeline.Pipeline, name string) bool {
	if name == pl.Location.SessionID {
		return true
	}
	if pl.Manifest != nil {
		for _, e := range pl.Manifest.Entries {
			if e.ReplaySession != nil && *e.ReplaySession == name {
				return true
			}
		}
	}
	if pl.ScratchDir == "" {
		return false
	}
	for _, p := range []string{
		filepath.Join(WorktreesDir, name), filepath.Join(WorktreesDir, name+".ab"),
		filepath.Join(forksDir, name), "crucible-dispatch-" + name, "dispatch-" + name,
	} {
		if _, err := os.Lstat(filepath.Join(pl.ScratchDir, p)); err == nil {
			return true
		}
	}
	return false
}
