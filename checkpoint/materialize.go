package checkpoint

import (
	"fmt"
	"os"
	"sort"

	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// Materialize writes checkpoint cp's tree into the store's project directory, which
// must be empty: it builds the isolated worktree of an A/B replay without touching
// the user's tree. Unsafe trees (paths or symlinks leaving the directory) are refused
// before anything is written. It returns the number of files written.
func (s *Store) Materialize(cp Checkpoint) (int, error) {
	entries, err := os.ReadDir(s.projectDir)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", s.projectDir, err)
	}
	if len(entries) > 0 {
		return 0, fmt.Errorf("%s is not empty; a checkpoint is materialized only into an empty directory", s.projectDir)
	}
	// Every tree and blob of the checkpoint is read: its pack stays open meanwhile.
	defer s.objects.keepPacksOpen()()
	target, err := s.objects.readTreeFiles(cp.Tree)
	if err != nil {
		return 0, err
	}
	files := make([]treeFile, 0, len(target))
	for _, t := range target {
		if t.Mode != filemode.Submodule {
			files = append(files, t)
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	dirs := &dirMaker{root: s.projectDir, made: map[string]bool{}}
	if err := parallel(len(files), func(i int) error {
		_, err := s.writeEntry(files[i], dirs)
		return err
	}); err != nil {
		return 0, fmt.Errorf("materializing checkpoint %s into %s: %w", cp.Short, s.projectDir, err)
	}
	return len(files), nil
}
