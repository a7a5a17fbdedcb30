package checkpoint

import (
	"fmt"
	"math/rand"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/stretchr/testify/require"
)

// TestSortedTreeBuildMatchesTheMapBuild: the tree built in one pass over sorted
// paths is the one the node map builds, for names that sort around "/".
func TestSortedTreeBuildMatchesTheMapBuild(t *testing.T) {
	t.Parallel()
	o := newObjectStore(t.TempDir(), nil)
	parts := []string{"a", "a.b", "a-b", "a0", "ab", "b", "z", "a!", "é"}
	rng := rand.New(rand.NewSource(1))
	for round := 0; round < 50; round++ {
		seen := map[string]bool{}
		var files []treeFile
		for i := 0; i < 1+rng.Intn(60); i++ {
			depth := 1 + rng.Intn(4)
			var p []string
			for d := 0; d < depth; d++ {
				p = append(p, parts[rng.Intn(len(parts))])
			}
			rel := strings.Join(p, "/")
			if seen[rel] || conflicts(seen, rel) {
				continue
			}
			seen[rel] = true
			files = append(files, treeFile{Path: rel, Mode: []filemode.FileMode{filemode.Regular, filemode.Executable, filemode.Symlink}[rng.Intn(3)],
				Hash: plumbing.NewHash(fmt.Sprintf("%040x", rng.Int63()))})
		}
		sorted := slices.Clone(files)
		slices.SortFunc(sorted, func(a, b treeFile) int { return strings.Compare(a.Path, b.Path) })
		root := newTreeNode()
		for _, f := range files {
			dir, name := path.Split(f.Path)
			root.descend(strings.TrimSuffix(dir, "/")).files[name] = f
		}
		want, err := o.writeTreeNode(root)
		require.NoError(t, err)
		got, err := o.buildTree(sorted)
		require.NoError(t, err)
		require.Equal(t, want, got, "round %d: %v", round, sorted)
	}
}

// conflicts reports whether rel is a directory of a file in seen or has one as its directory.
func conflicts(seen map[string]bool, rel string) bool {
	for p := range seen {
		if strings.HasPrefix(p, rel+"/") || strings.HasPrefix(rel, p+"/") {
			return true
		}
	}
	return false
}

// TestWalkListsFilesInPathOrder: the walk's files come in byte order of their paths
// (what the stat cache and the one-pass tree build expect), for names that sort
// around "/".
func TestWalkListsFilesInPathOrder(t *testing.T) {
	t.Parallel()
	p := newTestProject(t)
	for _, rel := range []string{"a/b", "a.b", "a-b", "a0", "a/b.c/d", "a/b-c", "ab/c"} {
		p.write(rel, rel+"\n")
	}
	snap, err := p.store().walk()
	require.NoError(t, err)
	var got []string
	for _, f := range snap.sorted {
		got = append(got, f.rel)
		require.Same(t, f, snap.files[f.rel])
	}
	require.Len(t, snap.files, len(got))
	require.True(t, slices.IsSorted(got), "%q", got)
	require.Contains(t, got, "a/b.c/d")
}
