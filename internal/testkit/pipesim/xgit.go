package pipesim

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Incremental repositories for the executable scenarios: unlike the one-shot
// writer (writer.go), the project and the shadow repository here are changed
// event by event, and by the real resume in between, so they are ordinary git
// directories with loose objects that go-git reads and writes.

// xInitProject makes the project repository on branch with one initial commit.
func xInitProject(project, branch string, at time.Time) error {
	if err := xGitInit(project, branch); err != nil {
		return err
	}
	r := openXRepo(filepath.Join(project, ".git"))
	sig := signature("Dana Developer", "dana@example.invalid", at)
	idx, err := r.readIndex()
	if err != nil {
		return err
	}
	for _, p := range []string{"README.md", "billing/doc.go"} {
		c := map[string]string{"README.md": "# billing\n", "billing/doc.go": "package billing\n"}[p]
		full := filepath.Join(project, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := xWriteFile(full, []byte(c), 0o644); err != nil {
			return err
		}
		if err := r.stage(idx, project, p); err != nil {
			return err
		}
	}
	_, err = r.commitIndex(idx, "chore: initial commit\n", sig)
	return err
}

// xGitInit is `git init -b branch project` as go-git's PlainInit writes it
// (TestXGitInitMatchesGoGit): its directories, HEAD and config, nothing more.
func xGitInit(project, branch string) error {
	gitDir := filepath.Join(project, ".git")
	for _, d := range []string{"objects/info", "objects/pack", "refs/heads", "refs/tags"} {
		if err := os.MkdirAll(filepath.Join(gitDir, filepath.FromSlash(d)), 0o755); err != nil {
			return err
		}
	}
	if err := xWriteFile(filepath.Join(gitDir, "HEAD"), []byte("ref: "+plumbing.NewBranchReferenceName(branch).String()+"\n"), 0o644); err != nil {
		return err
	}
	return xWriteFile(filepath.Join(gitDir, "config"), []byte("[core]\n\tbare = false\n"), 0o644)
}

// xCommit commits path (a file of the project) on the current branch at at,
// as `git add path && git commit` would (go-git's Worktree.Add and Commit
// write the same objects, index and ref, several times slower).
func xCommit(project, path, msg string, at time.Time) error {
	r := openXRepo(filepath.Join(project, ".git"))
	idx, err := r.readIndex()
	if err != nil {
		return err
	}
	if err := r.stage(idx, project, path); err != nil {
		return err
	}
	_, err = r.commitIndex(idx, msg+"\n", signature("Claude", "noreply@anthropic.com", at))
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
	r := openXRepo(filepath.Join(project, ".git"))
	_, head, err := r.head()
	if err != nil {
		return 0
	}
	n := 0
	for !head.IsZero() {
		c, err := r.commit(head)
		if err != nil || c.Author.When.Before(start) || len(c.ParentHashes) == 0 {
			break
		}
		n++
		head = c.ParentHashes[0]
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
		if err := xWriteFile(filepath.Join(shadow, name), []byte(c), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// xCheckpoint is the checkpoint skill's `git add -A && git commit -m "<reason>
// | <local time> | <source>"` in the shadow repository: the whole project tree
// (its .git excluded) as the master branch's next commit.
func xCheckpoint(shadow, project, subject string, at time.Time) (string, error) {
	r := openXRepo(shadow)
	tree, err := xTreeOf(r, project, "")
	if err != nil {
		return "", err
	}
	c := &object.Commit{Author: signature("Dana Developer", "dana@example.invalid", at), Message: subject + "\n", TreeHash: tree}
	c.Committer = c.Author
	if parent, err := r.ref("refs/heads/master"); err == nil && !parent.IsZero() {
		c.ParentHashes = []plumbing.Hash{parent}
	}
	h, err := r.putObject(c)
	if err != nil {
		return "", err
	}
	return h.String(), r.setRef("refs/heads/master", h)
}

// xTreeOf writes dir's tree (rel inside the project; .git skipped at the top)
// into r: only the objects r lacks are written.
func xTreeOf(r *xRepo, dir, rel string) (plumbing.Hash, error) {
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
			if h, err = xTreeOf(r, full, rel+e.Name()+"/"); err != nil {
				return h, err
			}
			mode = filemode.Dir
		case e.Type()&os.ModeSymlink != 0:
			target, err := os.Readlink(full)
			if err != nil {
				return h, err
			}
			if h, err = r.put(plumbing.BlobObject, []byte(target)); err != nil {
				return h, err
			}
			mode = filemode.Symlink
		default:
			data, err := xReadFile(full)
			if err != nil {
				return h, err
			}
			if h, err = r.put(plumbing.BlobObject, data); err != nil {
				return h, err
			}
		}
		t.Entries = append(t.Entries, object.TreeEntry{Name: e.Name(), Mode: mode, Hash: h})
	}
	sort.Slice(t.Entries, func(i, j int) bool { return gitName(t.Entries[i]) < gitName(t.Entries[j]) })
	return r.putObject(&t)
}

func gitName(e object.TreeEntry) string {
	if e.Mode == filemode.Dir {
		return e.Name + "/"
	}
	return e.Name
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
		data, err := xReadFile(p)
		out[rel] = string(data)
		return err
	})
	return out, err
}

// xHistory is the subjects of the project's current branch, first parents from
// HEAD back to the root, and the branch name.
func xHistory(project string) (subjects []string, branch string, err error) {
	r := openXRepo(filepath.Join(project, ".git"))
	ref, head, err := r.head()
	if err != nil {
		return nil, "", err
	}
	if head.IsZero() {
		return nil, "", plumbing.ErrReferenceNotFound
	}
	commits, err := r.firstParents(head)
	for _, c := range commits {
		subjects = append(subjects, strings.SplitN(c.Message, "\n", 2)[0])
	}
	return subjects, plumbing.ReferenceName(ref).Short(), err
}

// xSavedTrees is every file content kept in a tree replay or the checkpoint
// skill can bring back: every shadow commit and every commit a ref of the
// project names (refs/replay/* included), as path -> contents. Each tree and
// blob is read once, however many commits share it.
func xSavedTrees(project, shadow string) map[string]map[string]bool {
	saved := map[string]map[string]bool{}
	for _, r := range []*xRepo{openXRepo(filepath.Join(project, ".git")), openXRepo(shadow)} {
		seen := map[string]bool{} // tree or blob hash at a path
		var walk func(h plumbing.Hash, dir string)
		walk = func(h plumbing.Hash, dir string) {
			if seen[h.String()+dir] {
				return
			}
			seen[h.String()+dir] = true
			t, err := r.tree(h)
			if err != nil {
				return
			}
			for _, e := range t.Entries {
				p := dir + e.Name
				switch {
				case e.Mode == filemode.Dir:
					walk(e.Hash, p+"/")
				case e.Mode == filemode.Submodule || seen[e.Hash.String()+p]:
				default:
					seen[e.Hash.String()+p] = true
					o, err := r.object(e.Hash)
					if err != nil {
						continue
					}
					rd, err := o.Reader()
					if err != nil {
						continue
					}
					c, err := io.ReadAll(rd)
					if err != nil {
						continue
					}
					if saved[p] == nil {
						saved[p] = map[string]bool{}
					}
					saved[p][string(c)] = true
				}
			}
		}
		_ = r.reachable(func(c *object.Commit) { walk(c.TreeHash, "") })
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
