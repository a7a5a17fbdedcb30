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
// machine gave out. An entry that is not a real directory (a planted link or
// file) does not take a name: the no-follow mkdir that follows refuses it.
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
		// Only a real directory is a session's: a link or a file planted in
		// its place is not taken but refused where the directory is created.
		if st, err := os.Lstat(filepath.Join(pl.ScratchDir, p)); err == nil && st.IsDir() {
			return true
		}
	}
	return false
}
