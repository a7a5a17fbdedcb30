package pipesim

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// TestXCommitMatchesGoGit: the simulator's own `git add && git commit`
// (xCommit) writes the commits, tree and index go-git's worktree writes for
// the same changes (it replaced go-git's worktree for speed), and refuses an
// empty commit as go-git does.
func TestXCommitMatchesGoGit(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.FixedZone("", 3600))
	steps := []struct{ path, content, msg string }{
		{"units/g01-a.txt", "a done\n", "feat: a"},
		{"units/g02-b.txt", "b done\n", "feat: b"},
		{"units/g01-a.txt", "a done\na again\n", "feat: a twice"},
		{"docs/deep/x.md", "x\n", "docs: x"},
	}
	var heads []plumbing.Hash
	var indexes [][]string
	for _, own := range []bool{false, true} {
		project := filepath.Join(t.TempDir(), "p")
		if err := xInitProject(project, "feat/x", at); err != nil {
			t.Fatal(err)
		}
		r, err := git.PlainOpen(project)
		if err != nil {
			t.Fatal(err)
		}
		for i, st := range steps {
			full := filepath.Join(project, filepath.FromSlash(st.path))
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(full, []byte(st.content), 0o644); err != nil {
				t.Fatal(err)
			}
			when := at.Add(time.Duration(i) * time.Minute)
			if own {
				err = xCommit(project, st.path, st.msg, when)
			} else {
				w, werr := r.Worktree()
				if werr != nil {
					t.Fatal(werr)
				}
				if err = w.AddWithOptions(&git.AddOptions{Path: st.path, SkipStatus: true}); err == nil {
					sig := object.Signature{Name: "Claude", Email: "noreply@anthropic.com", When: when}
					_, err = w.Commit(st.msg+"\n", &git.CommitOptions{Author: &sig, Committer: &sig})
				}
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		// a commit of an unchanged file is refused by both
		if own {
			err = xCommit(project, steps[0].path, "again", at)
		} else {
			w, _ := r.Worktree()
			sig := object.Signature{Name: "Claude", Email: "noreply@anthropic.com", When: at}
			_, err = w.Commit("again\n", &git.CommitOptions{Author: &sig, Committer: &sig})
		}
		if err == nil {
			t.Errorf("own %v: an empty commit was made", own)
		}
		head, err := r.Head()
		if err != nil {
			t.Fatal(err)
		}
		heads = append(heads, head.Hash())
		idx, err := r.Storer.Index()
		if err != nil {
			t.Fatal(err)
		}
		var entries []string
		for _, e := range idx.Entries {
			entries = append(entries, fmt.Sprintf("%s %s %s %d", e.Name, e.Hash, e.Mode, e.Size))
		}
		indexes = append(indexes, entries)
	}
	if heads[0] != heads[1] {
		t.Errorf("HEAD after go-git's commits %s, after xCommit %s", heads[0], heads[1])
	}
	if !reflect.DeepEqual(indexes[0], indexes[1]) {
		t.Errorf("index after go-git's commits %v, after xCommit %v", indexes[0], indexes[1])
	}
}

// TestXReferenceProjectOnly: the reference built from the events that write
// the project alone (as XRunSeed builds it) has the tree and history of the
// reference built from every event.
func TestXReferenceProjectOnly(t *testing.T) {
	for seed := int64(1); seed <= 12; seed++ {
		s := NewXScenario(seed)
		var heads []string
		var trees []map[string]string
		for _, only := range []bool{false, true} {
			L := newXLayout(filepath.Join(t.TempDir(), "r"), s.Sid)
			events, err := s.xSetupFor(L, only)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range events {
				if only && !xProjectEvent(e) {
					continue
				}
				if err := s.xApply(L, e, 0); err != nil {
					t.Fatal(err)
				}
			}
			files, err := XFiles(L.project)
			if err != nil {
				t.Fatal(err)
			}
			heads, trees = append(heads, xHeadHash(L.project)), append(trees, files)
		}
		if heads[0] != heads[1] || !reflect.DeepEqual(trees[0], trees[1]) {
			t.Errorf("seed %d: the project-only reference differs from the full one (HEAD %s vs %s)", seed, heads[1], heads[0])
		}
	}
}

// TestXShadowSubjectsMatchGoGit: the simulator's own reading of the shadow
// repository's commits (every ref, every parent) finds the subjects and times
// go-git's log of the same repository finds (xShadowLog).
func TestXShadowSubjectsMatchGoGit(t *testing.T) {
	for _, seed := range []int64{1, 4, 9} {
		s := NewXScenario(seed)
		L := newXLayout(filepath.Join(t.TempDir(), "r"), s.Sid)
		events, err := s.xSetup(L)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range events {
			if err := s.xApply(L, e, 0); err != nil {
				t.Fatal(err)
			}
		}
		logged, err := xShadowLog(L.shadow)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]time.Time{}
		for _, c := range logged {
			if c.at.After(want[c.subject]) {
				want[c.subject] = c.at
			}
		}
		got := xShadowSubjects(L.shadow)
		if len(want) == 0 || len(got) != len(want) {
			t.Fatalf("seed %d: %d subjects, go-git's log has %d", seed, len(got), len(want))
		}
		for sub, at := range want {
			if !got[sub].Equal(at) {
				t.Errorf("seed %d: %q at %v, go-git's log says %v", seed, sub, got[sub], at)
			}
		}
	}
}

// TestXReferenceInMemory: the reference XRunSeed computes in memory
// (xReference) has the tree and history of the project-only reference
// written on disk, seed by seed.
func TestXReferenceInMemory(t *testing.T) {
	n := int64(60)
	if testing.Short() {
		n = 12
	}
	for seed := int64(1); seed <= n; seed++ {
		s := NewXScenario(seed)
		L := newXLayout(filepath.Join(t.TempDir(), "r"), s.Sid)
		events, err := s.xSetupFor(L, true)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range events {
			if xProjectEvent(e) {
				if err := s.xApply(L, e, 0); err != nil {
					t.Fatal(err)
				}
			}
		}
		files, err := XFiles(L.project)
		if err != nil {
			t.Fatal(err)
		}
		hist, _, err := xHistory(L.project)
		if err != nil {
			t.Fatal(err)
		}
		mfiles, mhist, err := s.xReference()
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(files, mfiles) || !reflect.DeepEqual(hist, mhist) {
			t.Errorf("seed %d: the reference in memory differs from the one on disk:\n disk %v %q\n memory %v %q", seed, len(files), hist, len(mfiles), mhist)
		}
	}
}

// TestXGitInitMatchesGoGit: the simulator's `git init` writes the directories
// and files go-git's PlainInit writes, with the same contents.
func TestXGitInitMatchesGoGit(t *testing.T) {
	layout := func(dir string) map[string]string {
		out := map[string]string{}
		err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			info, err := d.Info()
			if err != nil {
				return err
			}
			if d.IsDir() {
				out[rel] = "dir " + info.Mode().String()
				return nil
			}
			data, err := os.ReadFile(p)
			out[rel] = info.Mode().String() + " " + string(data)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, branch := range []string{"feat/billing", "main"} {
		a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
		if _, err := git.PlainInitWithOptions(a, &git.PlainInitOptions{InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName(branch)}}); err != nil {
			t.Fatal(err)
		}
		if err := xGitInit(b, branch); err != nil {
			t.Fatal(err)
		}
		if la, lb := layout(a), layout(b); !reflect.DeepEqual(la, lb) {
			t.Errorf("branch %s: go-git's init %v, the simulator's %v", branch, la, lb)
		}
	}
}
