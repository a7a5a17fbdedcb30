package pipesim

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/go-git/go-billy/v5/osfs"
)

// Incremental repositories for the executable scenarios: unlike the one-shot
// writer (writer.go), the project and the shadow repository here are changed
// event by event, and by the real resume in between, so they are ordinary git
// directories with loose objects that go-git reads and writes.

// xInitProject makes the project repository on branch with one initial commit.
func xInitProject(project, branch string, at time.Time) error {
	r, err := git.PlainInitWithOptions(project, &git.PlainInitOptions{InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName(branch)}})
	if err != nil {
		return err
	}
	for p, c := range map[string]string{"README.md": "# billing\n", "billing/doc.go": "package billing\n"} {
		full := filepath.Join(project, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			return err
		}
	}
	w, err := r.Worktree()
	if err != nil {
		return err
	}
	if err := w.AddWithOptions(&git.AddOptions{All: true}); err != nil {
		return err
	}
	sig := object.Signature{Name: "Dana Developer", Email: "dana@example.invalid", When: at}
	_, err = w.Commit("chore: initial commit\n", &git.CommitOptions{Author: &sig, Committer: &sig})
	return err
}

// xCommit commits path (a file of the project) on the current branch at at.
func xCommit(project, path, msg string, at time.Time) error {
	r, err := git.PlainOpen(project)
	if err != nil {
		return err
	}
	w, err := r.Worktree()
	if err != nil {
		return err
	}
	if err := w.AddWithOptions(&git.AddOptions{Path: path, SkipStatus: true}); err != nil {
		return err
	}
	sig := object.Signature{Name: "Claude", Email: "noreply@anthropic.com", When: at}
	_, err = w.Commit(msg+"\n", &git.CommitOptions{Author: &sig, Committer: &sig})
	return err
}

// xResetHard moves the branch back n commits with its tree and index, as a
// `git reset --hard HEAD~n` after the crash would; untracked files stay.
func xResetHard(project string, n int) error {
	r, err := git.PlainOpen(project)
	if err != nil {
		return err
	}
	head, err := r.Head()
	if err != nil {
		return err
	}
	c, err := r.CommitObject(head.Hash())
	if err != nil {
		return err
	}
	for i := 0; i < n && c.NumParents() > 0; i++ {
		if c, err = c.Parent(0); err != nil {
			return err
		}
	}
	w, err := r.Worktree()
	if err != nil {
		return err
	}
	return w.Reset(&git.ResetOptions{Commit: c.Hash, Mode: git.HardReset})
}

// xOwnCommits counts the commits at the tip of the project's branch made at or
// after start (first parents).
func xOwnCommits(project string, start time.Time) int {
	r, err := git.PlainOpen(project)
	if err != nil {
		return 0
	}
	head, err := r.Head()
	if err != nil {
		return 0
	}
	n := 0
	c, err := r.CommitObject(head.Hash())
	for err == nil && !c.Author.When.Before(start) && c.NumParents() > 0 {
		n++
		c, err = c.Parent(0)
	}
	return n
}

// xShadowInit makes the shadow checkpoint repository: a git dir whose
// core.worktree is the project, with the checkpoint skill's .gitignore.
func xShadowInit(shadow, project string) error {
	for _, d := range []string{"objects", "refs/heads", "refs/tags"} {
		if err := os.MkdirAll(filepath.Join(shadow, d), 0o755); err != nil {
			return err
		}
	}
	for name, c := range map[string]string{"config": shadowConfig(project), "HEAD": "ref: refs/heads/master\n", ".gitignore": shadowIgnore} {
		if err := os.WriteFile(filepath.Join(shadow, name), []byte(c), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// xCheckpoint is the checkpoint skill's `git add -A && git commit -m "<reason>
// | <local time> | <source>"` in the shadow repository: the whole project tree
// (its .git excluded) as the master branch's next commit.
func xCheckpoint(shadow, project, subject string, at time.Time) (string, error) {
	st := filesystem.NewStorage(osfs.New(shadow), cache.NewObjectLRUDefault())
	tree, err := xTreeOf(st, project, "")
	if err != nil {
		return "", err
	}
	c := &object.Commit{Author: signature("Dana Developer", "dana@example.invalid", at), Message: subject + "\n", TreeHash: tree}
	c.Committer = c.Author
	if ref, err := st.Reference(plumbing.NewBranchReferenceName("master")); err == nil {
		c.ParentHashes = []plumbing.Hash{ref.Hash()}
	}
	obj := st.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		return "", err
	}
	h, err := st.SetEncodedObject(obj)
	if err != nil {
		return "", err
	}
	return h.String(), st.SetReference(plumbing.NewHashReference(plumbing.NewBranchReferenceName("master"), h))
}

// xTreeOf writes dir's tree (rel inside the project; .git skipped at the top)
// into st.
func xTreeOf(st storer.EncodedObjectStorer, dir, rel string) (plumbing.Hash, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	var t object.Tree
	for _, e := range ents {
		if rel == "" && e.Name() == ".git" {
			continue
		}
		full := filepath.Join(dir, e.Name())
		var h plumbing.Hash
		mode := filemode.Regular
		switch {
		case e.IsDir():
			if h, err = xTreeOf(st, full, rel+e.Name()+"/"); err != nil {
				return h, err
			}
			mode = filemode.Dir
		case e.Type()&os.ModeSymlink != 0:
			target, err := os.Readlink(full)
			if err != nil {
				return h, err
			}
			if h, err = xBlob(st, []byte(target)); err != nil {
				return h, err
			}
			mode = filemode.Symlink
		default:
			data, err := os.ReadFile(full)
			if err != nil {
				return h, err
			}
			if h, err = xBlob(st, data); err != nil {
				return h, err
			}
		}
		t.Entries = append(t.Entries, object.TreeEntry{Name: e.Name(), Mode: mode, Hash: h})
	}
	sort.Slice(t.Entries, func(i, j int) bool { return gitName(t.Entries[i]) < gitName(t.Entries[j]) })
	obj := st.NewEncodedObject()
	if err := t.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return st.SetEncodedObject(obj)
}

func gitName(e object.TreeEntry) string {
	if e.Mode == filemode.Dir {
		return e.Name + "/"
	}
	return e.Name
}

func xBlob(st storer.EncodedObjectStorer, data []byte) (plumbing.Hash, error) {
	obj := st.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	w, err := obj.Writer()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if _, err := w.Write(data); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := w.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	return st.SetEncodedObject(obj)
}

// XFiles reads a project's working tree (its .git skipped): path -> content.
func XFiles(project string) (map[string]string, error) {
	out := map[string]string{}
	err := filepath.WalkDir(project, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(project, p)
		rel = filepath.ToSlash(rel)
		if rel == ".git" {
			return filepath.SkipDir
		}
		if d.IsDir() {
			return nil
		}
		if d.Type()&os.ModeSymlink != 0 {
			t, err := os.Readlink(p)
			out[rel] = "symlink:" + t
			return err
		}
		data, err := os.ReadFile(p)
		out[rel] = string(data)
		return err
	})
	return out, err
}

// xHistory is the subjects of the project's current branch, first parents from
// HEAD back to the root, and the branch name.
func xHistory(project string) (subjects []string, branch string, err error) {
	r, err := git.PlainOpen(project)
	if err != nil {
		return nil, "", err
	}
	head, err := r.Head()
	if err != nil {
		return nil, "", err
	}
	c, err := r.CommitObject(head.Hash())
	for err == nil {
		subjects = append(subjects, strings.SplitN(c.Message, "\n", 2)[0])
		if c.NumParents() == 0 {
			break
		}
		c, err = c.Parent(0)
	}
	return subjects, head.Name().Short(), err
}

// xSavedTrees is every file content kept in a tree replay or the checkpoint
// skill can bring back: every shadow commit and every commit a ref of the
// project names (refs/replay/* included), as path -> contents.
func xSavedTrees(project, shadow string) map[string]map[string]bool {
	saved := map[string]map[string]bool{}
	addTree := func(t *object.Tree) {
		_ = t.Files().ForEach(func(f *object.File) error {
			c, err := f.Contents()
			if err == nil {
				if saved[f.Name] == nil {
					saved[f.Name] = map[string]bool{}
				}
				saved[f.Name][c] = true
			}
			return nil
		})
	}
	walk := func(r *git.Repository) {
		refs, err := r.References()
		if err != nil {
			return
		}
		seen := map[plumbing.Hash]bool{}
		_ = refs.ForEach(func(ref *plumbing.Reference) error {
			if ref.Type() != plumbing.HashReference {
				return nil
			}
			stack := []plumbing.Hash{ref.Hash()}
			for len(stack) > 0 {
				h := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				if seen[h] {
					continue
				}
				seen[h] = true
				c, err := r.CommitObject(h)
				if err != nil {
					continue
				}
				if t, err := c.Tree(); err == nil {
					addTree(t)
				}
				stack = append(stack, c.ParentHashes...)
			}
			return nil
		})
	}
	if r, err := git.PlainOpen(project); err == nil {
		walk(r)
	}
	if r, err := git.Open(filesystem.NewStorage(osfs.New(shadow), cache.NewObjectLRUDefault()), nil); err == nil {
		walk(r)
	}
	return saved
}

// xHasCommitWith says whether a commit of the branch's first-parent history
// has subject.
func xHasSubject(subjects []string, subject string) bool {
	for _, s := range subjects {
		if s == subject {
			return true
		}
	}
	return false
}

// XHeaderTime reads a dispatch file's **Timestamp:** line.
func XHeaderTime(data []byte) (time.Time, bool) {
	for _, l := range bytes.Split(data, []byte("\n")) {
		if v, ok := bytes.CutPrefix(l, []byte("**Timestamp:** ")); ok {
			t, err := time.Parse(time.RFC3339, strings.TrimSpace(string(v)))
			return t, err == nil
		}
	}
	return time.Time{}, false
}
