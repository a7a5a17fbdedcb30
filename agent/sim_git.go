package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/replaytool/replay/internal/gitrepo"
	"github.com/replaytool/replay/internal/safewrite"
)

// SimAuthorName and SimAuthorEmail sign builtin:sim's commits.
const (
	SimAuthorName  = "replay-sim"
	SimAuthorEmail = "sim@replay.local"
)

// repoLocks serialises builtin:sim's commits per repository: parallel implementers
// of one wave share the index and the branch.
var repoLocks sync.Map // worktree root → *sync.Mutex

// SimFile returns the file, relative to the working tree, that builtin:sim's
// mutating role writes: sim/task-<N>/<role>.txt, or sim/<role>.txt without a task.
func SimFile(role string, task *int) string {
	if task == nil {
		return path.Join("sim", safeName(role)+".txt")
	}
	return path.Join("sim", "task-"+strconv.Itoa(*task), safeName(role)+".txt")
}

// SimCommitMessage returns the message of builtin:sim's commit for role and task.
func SimCommitMessage(role string, task *int) string {
	if task == nil {
		return role + " (replay sim)"
	}
	return fmt.Sprintf("%s: task %d (replay sim)", role, *task)
}

// simCommit writes the role's file in req.WorkDir, stages it and commits it on the
// current branch at req's clock; it returns the commit hash.
func simCommit(req Request) (string, error) {
	repo, err := gitrepo.Open(req.WorkDir)
	if err != nil {
		return "", fmt.Errorf("%s: not a git working tree: %w", req.WorkDir, err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		return "", fmt.Errorf("%s: %w", req.WorkDir, err)
	}
	root := wt.Filesystem.Root()
	mu, _ := repoLocks.LoadOrStore(root, &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()

	rel := SimFile(req.Role, req.Task)
	if err := safewrite.WriteFileIn(root, filepath.FromSlash(rel), simContent(req), 0o644); err != nil {
		return "", err
	}
	if err := wt.AddWithOptions(&git.AddOptions{Path: rel, SkipStatus: true}); err != nil {
		return "", fmt.Errorf("%s: cannot stage %s: %w", root, rel, err)
	}
	sig := &object.Signature{Name: SimAuthorName, Email: SimAuthorEmail, When: req.now()}
	h, err := wt.Commit(SimCommitMessage(req.Role, req.Task), &git.CommitOptions{Author: sig, Committer: sig, AllowEmptyCommits: true})
	if err != nil {
		return "", fmt.Errorf("%s: cannot commit %s: %w", root, rel, err)
	}
	return h.String(), nil
}

// simContent is the file a mutating role writes: a few lines derived from the
// dispatch's identity and body. Not from its seq: concurrent replicas of a
// replicated A/B run take seqs in whatever order they reach the shared manifest,
// and the commit (so the replica's artifact diff) must not depend on that.
func simContent(req Request) []byte {
	sum := sha256.Sum256(req.Body)
	hx := hex.EncodeToString(sum[:])
	var b strings.Builder
	fmt.Fprintf(&b, "# %s (replay sim)\n", req.Role)
	fmt.Fprintf(&b, "template: %s\nphase: %s\ntask: %s\nbody-sha256: %s\n", req.Template, orDash(req.Phase), taskText(req.Task, "-"), hx)
	for i := 0; i < 3; i++ {
		fmt.Fprintf(&b, "line %d: %s\n", i+1, hx[i*16:(i+1)*16])
	}
	return []byte(b.String())
}
