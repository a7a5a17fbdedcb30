package resume

import (
	"errors"
)

// StartHead returns the commit the re-dispatched work starts from: the project
// head recorded with the resume point's checkpoint (where a restore moves the
// branch, and where an A/B worktree starts), else the project's HEAD now.
func StartHead(a *Analysis) (string, error) {
	pl := a.Pipeline
	if pl.Store != nil && a.Checkpoint != nil {
		full, err := pl.Store.Find(a.Checkpoint.Hash)
		if err != nil {
			return "", err
		}
		h, err := pl.Store.ProjectHeadAt(*full)
		if err != nil {
			return "", err
		}
		if !h.IsZero() {
			return h.String(), nil
		}
	}
	if pl.Project == nil {
		return "", errors.New("no project repository")
	}
	ref, err := pl.Project.Head()
	if err != nil {
		return "", err
	}
	return ref.Hash().String(), nil
}
