package checkpoint

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/stretchr/testify/require"
)

// base is the pinned time every test project starts from.
var base = time.Date(2026, 4, 7, 14, 0, 0, 0, time.UTC)

// clockAt returns a clock fixed at base plus d.
func clockAt(d time.Duration) func() time.Time { return func() time.Time { return base.Add(d) } }

// testProject is a small git project with a shadow directory beside it.
type testProject struct {
	t      *testing.T
	root   string
	dir    string
	shadow string
	repo   *git.Repository
}

// newTestProject makes a project on branch feat/login with a .gitignore for
// node_modules/ and *.log, a few files, an executable and a symlink, and one commit.
func newTestProject(t *testing.T) *testProject {
	t.Helper()
	root := t.TempDir()
	p := &testProject{t: t, root: root, dir: filepath.Join(root, "project"), shadow: filepath.Join(root, "home", "shadow", "h")}
	repo, err := git.PlainInitWithOptions(p.dir, &git.PlainInitOptions{
		InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName("feat/login")},
	})
	require.NoError(t, err)
	p.repo = repo
	p.write(".gitignore", "node_modules/\n*.log\n")
	p.write("README.md", "# project\n")
	p.write("src/app.go", "package app\n")
	p.write("src/deep/util.go", "package deep\n")
	p.writeMode("run.sh", "#!/bin/sh\necho hi\n", 0o755)
	p.symlink("docs", "src")
	p.write("node_modules/lib/index.js", "module.exports = 1\n")
	p.write("build.log", "log line\n")
	p.commit("init", base)
	return p
}

func (p *testProject) abs(rel string) string { return filepath.Join(p.dir, filepath.FromSlash(rel)) }

func (p *testProject) write(rel, content string) { p.writeMode(rel, content, 0o644) }

func (p *testProject) writeMode(rel, content string, mode os.FileMode) {
	p.t.Helper()
	require.NoError(p.t, os.MkdirAll(filepath.Dir(p.abs(rel)), 0o755))
	require.NoError(p.t, os.WriteFile(p.abs(rel), []byte(content), mode))
	require.NoError(p.t, os.Chmod(p.abs(rel), mode))
}

func (p *testProject) symlink(rel, target string) {
	p.t.Helper()
	require.NoError(p.t, os.MkdirAll(filepath.Dir(p.abs(rel)), 0o755))
	os.Remove(p.abs(rel))
	require.NoError(p.t, os.Symlink(target, p.abs(rel)))
}

// commit commits every non-ignored change with pinned author and committer dates.
func (p *testProject) commit(msg string, when time.Time) plumbing.Hash {
	p.t.Helper()
	wt, err := p.repo.Worktree()
	require.NoError(p.t, err)
	require.NoError(p.t, wt.AddWithOptions(&git.AddOptions{All: true}))
	sig := &object.Signature{Name: "dev", Email: "dev@example.com", When: when}
	h, err := wt.Commit(msg, &git.CommitOptions{Author: sig, Committer: sig, AllowEmptyCommits: true})
	require.NoError(p.t, err)
	return h
}

func (p *testProject) head() plumbing.Hash {
	p.t.Helper()
	ref, err := p.repo.Head()
	require.NoError(p.t, err)
	return ref.Hash()
}

func (p *testProject) store() *Store {
	p.t.Helper()
	s, err := openOrInit(p.shadow, p.dir)
	require.NoError(p.t, err)
	return s
}

// state maps every path under the project except .git to its mode and content (or
// symlink target): the byte-and-mode picture of the working tree.
func (p *testProject) state() map[string]string {
	p.t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(p.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(p.dir, path)
		if rel == ".git" {
			return filepath.SkipDir
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(path)
			out[rel] = "link:" + target
		case d.IsDir():
			out[rel+"/"] = "dir"
		default:
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			out[rel] = info.Mode().String() + ":" + string(data)
		}
		return nil
	})
	require.NoError(p.t, err)
	return out
}

// foreign writes a shadow commit the way another tool would: the given subject, no
// trailer, no manifest row, the current working tree, author date when.
func (p *testProject) foreign(s *Store, subject string, when time.Time) plumbing.Hash {
	p.t.Helper()
	snap, err := s.takeSnapshot(true)
	require.NoError(p.t, err)
	branch, parent, err := s.shadowTip()
	require.NoError(p.t, err)
	sig := object.Signature{Name: "crucible", Email: "c@example.com", When: when}
	c := &object.Commit{Author: sig, Committer: sig, Message: subject + "\n", TreeHash: snap.tree}
	if !parent.IsZero() {
		c.ParentHashes = []plumbing.Hash{parent}
	}
	h, err := s.writeCommit(c)
	require.NoError(p.t, err)
	require.NoError(p.t, s.storage.SetReference(plumbing.NewHashReference(branch, h)))
	return h
}

func reasons(cps []Checkpoint) string {
	var out []string
	for _, c := range cps {
		out = append(out, c.Reason)
	}
	return strings.Join(out, ",")
}

// openOrInit is OpenOrInit on a path, checked first as a command checks it.
func openOrInit(shadowDir, projectDir string) (*Store, error) {
	shadow, err := ProveShadowDir(shadowDir)
	if err != nil {
		return nil, err
	}
	return OpenOrInit(shadow, projectDir)
}
