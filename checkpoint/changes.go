package checkpoint

import (
	"fmt"
	"sort"

	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/utils/merkletrie"
)

// Change is one path that differs between a checkpoint and its parent.
type Change struct {
	Path string `json:"path"`
	// Action is added, deleted or modified (content, mode or type).
	Action string `json:"action"`
}

// Changes lists what changed in cp against the checkpoint before it (everything is
// added for the first checkpoint), sorted by path.
func (s *Store) Changes(cp Checkpoint) ([]Change, error) {
	c, err := s.repo.CommitObject(cp.Hash)
	if err != nil {
		return nil, fmt.Errorf("%s: reading checkpoint %s: %w", s.shadowDir, cp.Short, err)
	}
	to, err := c.Tree()
	if err != nil {
		return nil, fmt.Errorf("%s: reading the tree of checkpoint %s: %w", s.shadowDir, cp.Short, err)
	}
	var from *object.Tree
	if len(c.ParentHashes) > 0 {
		parent, err := s.repo.CommitObject(c.ParentHashes[0])
		if err != nil {
			return nil, fmt.Errorf("%s: reading the checkpoint before %s: %w", s.shadowDir, cp.Short, err)
		}
		if from, err = parent.Tree(); err != nil {
			return nil, fmt.Errorf("%s: reading the tree before %s: %w", s.shadowDir, cp.Short, err)
		}
	}
	diff, err := object.DiffTree(from, to)
	if err != nil {
		return nil, fmt.Errorf("%s: comparing checkpoint %s with its parent: %w", s.shadowDir, cp.Short, err)
	}
	out := make([]Change, 0, len(diff))
	for _, ch := range diff {
		action, err := ch.Action()
		if err != nil {
			return nil, err
		}
		c := Change{Path: ch.To.Name}
		switch action {
		case merkletrie.Insert:
			c.Action = "added"
		case merkletrie.Delete:
			c.Action, c.Path = "deleted", ch.From.Name
		default:
			c.Action = "modified"
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}
