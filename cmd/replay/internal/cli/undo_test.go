package cli

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/fixture"
)

// Through the command line: a run with no checkpoint of its own (the shadow
// holds one taken by hand) whose task-3 implementer left a partial commit
// resumes on the current disk state, and `replay --yes` first restores the
// project commit from before that attempt: the report names it, the undo
// command and the pre-restore ref; --json gives the commit restored.
func TestResumeUndoesAPartialCommitWithNoCheckpoint(t *testing.T) {
	t.Parallel()
	for _, asJSON := range []bool{false, true} {
		p, err := fixture.Build(t.TempDir(), fixture.Options{Variants: []fixture.Variant{fixture.NoShadowRepo}})
		require.NoError(t, err)
		now := p.Now.UTC().Format(time.RFC3339)
		r := runFixture(t, p, false, nil, "checkpoint", "create", "--reason", "before-resume", "--source", "user", "--now", now)
		require.Equal(t, 0, r.code, r.stderr)
		repo, err := git.PlainOpen(p.Project)
		require.NoError(t, err)
		head, err := repo.Head()
		require.NoError(t, err)
		partial, err := repo.CommitObject(head.Hash())
		require.NoError(t, err)

		args := []string{"--yes", "--now", now}
		if asJSON {
			args = append(args, "--json")
		}
		r = runFixture(t, p, false, nil, args...)
		require.Equal(t, 0, r.code, r.stderr)
		after, err := repo.Head()
		require.NoError(t, err)
		assert.Equal(t, partial.ParentHashes[0], after.Hash(), "the branch is back before the partial commit")
		if asJSON {
			var doc struct {
				Restore struct {
					Commit    string `json:"commit"`
					SafetyRef string `json:"safety_ref"`
					Undo      string `json:"undo"`
				} `json:"restore"`
			}
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc), r.stdout)
			assert.Equal(t, partial.ParentHashes[0].String(), doc.Restore.Commit)
			assert.NotEmpty(t, doc.Restore.SafetyRef)
			assert.Contains(t, doc.Restore.Undo, "replay checkpoint restore")
			continue
		}
		assert.Contains(t, r.stdout, "restored project commit "+partial.ParentHashes[0].String()[:8])
		assert.Contains(t, r.stdout, "Partial commit undone (still reachable from refs/replay/pre-restore/")
		assert.Contains(t, r.stdout+r.stderr, "replay checkpoint restore")
	}
}
