package fork

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/replaytool/replay/ab"
	"github.com/replaytool/replay/internal/gitrepo"
	"github.com/replaytool/replay/pipeline"
)

// finalCommit returns a run's final commit and a repository that holds it: the
// original run's branch head in the project, a fork's worktree HEAD in its own
// repository (which shares the project's objects); ok is false when unknown.
func finalCommit(pl *pipeline.Pipeline, session string) (*git.Repository, plumbing.Hash, bool) {
	if session == pl.Location.SessionID {
		if pl.Project == nil {
			return nil, plumbing.ZeroHash, false
		}
		ref, err := pl.Project.Reference(pl.HistoryRef(), true)
		if err != nil {
			return nil, plumbing.ZeroHash, false
		}
		return pl.Project, ref.Hash(), true
	}
	dir := filepath.Join(forkDir(pl, session), WorktreeDir)
	if _, err := os.Stat(filepath.Join(dir, ".git")); err != nil {
		return nil, plumbing.ZeroHash, false
	}
	repo, err := gitrepo.Open(dir)
	if err != nil {
		return nil, plumbing.ZeroHash, false
	}
	head, err := repo.Head()
	if err != nil {
		return nil, plumbing.ZeroHash, false
	}
	return repo, head.Hash(), true
}

// ArtifactDiffRuns compares the final commits of runs a and b of pl's tree, read
// from b's repository (a fork's sees the project's objects), else a's. Unknown
// (zero stats, a note) when either commit cannot be found or read.
func ArtifactDiffRuns(pl *pipeline.Pipeline, a, b string) (ab.ArtifactStats, string) {
	ra, ha, okA := finalCommit(pl, a)
	rb, hb, okB := finalCommit(pl, b)
	if !okA || !okB {
		return ab.ArtifactStats{}, fmt.Sprintf("the final commit of run %s or %s is unknown (a fork without a worktree, or no project repository)", a, b)
	}
	for _, repo := range []*git.Repository{rb, ra} {
		if st, err := ab.ArtifactDiff(repo, ha, hb); err == nil {
			return st, ""
		}
	}
	return ab.ArtifactStats{}, fmt.Sprintf("the final commits %s and %s are not both in one repository", ha.String()[:8], hb.String()[:8])
}
