package mutate

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// templateRepo is a git repository whose skills/build/templates folder changes over
// three commits; tags v1 (lightweight) and v2 (annotated) mark the first two.
type templateRepo struct {
	root, templates string
	commits         []plumbing.Hash
	times           []time.Time
}

func newTemplateRepo(t *testing.T) *templateRepo {
	t.Helper()
	root := t.TempDir()
	repo, err := git.PlainInit(root, false)
	require.NoError(t, err)
	wt, err := repo.Worktree()
	require.NoError(t, err)
	tr := &templateRepo{root: root, templates: filepath.Join(root, "skills", "build", "templates")}
	base := time.Date(2026, 4, 1, 12, 0, 0, 0, time.UTC)
	commit := func(i int, files map[string]string, remove ...string) {
		for name, content := range files {
			writeFile(t, filepath.Join(root, name), content)
		}
		for _, name := range remove {
			require.NoError(t, os.Remove(filepath.Join(root, name)))
		}
		require.NoError(t, wt.AddWithOptions(&git.AddOptions{All: true}))
		when := base.Add(time.Duration(i) * time.Hour)
		sig := &object.Signature{Name: "dev", Email: "dev@example.com", When: when}
		h, err := wt.Commit("commit", &git.CommitOptions{Author: sig, Committer: sig})
		require.NoError(t, err)
		tr.commits = append(tr.commits, h)
		tr.times = append(tr.times, when)
	}
	commit(0, map[string]string{"README.md": "repo\n"})
	commit(1, map[string]string{
		"skills/build/templates/build-reviewer-prompt.md": "# Reviewer v1\n",
		"skills/build/templates/red-team-prompt.md":       "# Red team v1\n",
		"skills/build/other.md":                           "not a template\n",
	})
	_, err = repo.CreateTag("v1", tr.commits[1], nil)
	require.NoError(t, err)
	require.NoError(t, os.Symlink("/etc/passwd", filepath.Join(tr.templates, "evil.md")))
	commit(2, map[string]string{
		"skills/build/templates/build-reviewer-prompt.md": "# Reviewer v2\n",
		"skills/build/templates/sub/part.md":              "# Part v2\n",
	}, "skills/build/templates/red-team-prompt.md")
	_, err = repo.CreateTag("v2", tr.commits[2], &git.CreateTagOptions{Message: "v2", Tagger: &object.Signature{Name: "dev", Email: "dev@example.com", When: tr.times[2]}})
	require.NoError(t, err)
	commit(3, map[string]string{"skills/build/templates/build-reviewer-prompt.md": "# Reviewer v3\n"})
	c, err := repo.CommitObject(tr.commits[3])
	require.NoError(t, err)
	f, err := c.File("skills/build/templates/evil.md")
	require.NoError(t, err, "the symlink must be in the tree for the skip test")
	require.Equal(t, filemode.Symlink, f.Mode)
	return tr
}

// readTree returns every regular file below dir by slash path.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(data)
		return nil
	}))
	return out
}

func TestExtractRef(t *testing.T) {
	t.Parallel()
	tr := newTemplateRepo(t)
	v1 := map[string]string{"build-reviewer-prompt.md": "# Reviewer v1\n", "red-team-prompt.md": "# Red team v1\n"}
	v2 := map[string]string{"build-reviewer-prompt.md": "# Reviewer v2\n", "sub/part.md": "# Part v2\n"}
	v3 := map[string]string{"build-reviewer-prompt.md": "# Reviewer v3\n", "sub/part.md": "# Part v2\n"}
	tests := []struct {
		name, dir, ref string
		want           map[string]string
		when           int
	}{
		{"branch", tr.templates, "master", v3, 3},
		{"HEAD", tr.templates, "HEAD", v3, 3},
		{"lightweight tag", tr.templates, "v1", v1, 1},
		{"annotated tag", tr.templates, "v2", v2, 2},
		{"full sha", tr.templates, tr.commits[1].String(), v1, 1},
		{"short sha", tr.templates, tr.commits[2].String()[:7], v2, 2},
		{"relative revision", tr.templates, "HEAD~2", v1, 1},
		{"templates dir is a subdir path with dots", filepath.Join(tr.templates, "sub", ".."), "v2", v2, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dest := filepath.Join(t.TempDir(), "templates")
			require.NoError(t, ExtractRef(tt.dir, tt.ref, dest))
			assert.Equal(t, tt.want, readTree(t, dest))
			st, err := os.Stat(filepath.Join(dest, "build-reviewer-prompt.md"))
			require.NoError(t, err)
			assert.True(t, st.ModTime().Equal(tr.times[tt.when]), "mtime %v, want the commit time %v", st.ModTime(), tr.times[tt.when])
		})
	}
}

func TestExtractRefErrors(t *testing.T) {
	t.Parallel()
	tr := newTemplateRepo(t)
	notRepo := t.TempDir()
	tests := []struct {
		name, dir, ref, wantErr string
	}{
		{"unknown ref", tr.templates, "no-such-branch", "--template-ref no-such-branch: no such branch, tag or commit in " + tr.root},
		{"unknown sha", tr.templates, "0123456789abcdef0123456789abcdef01234567", "no such branch, tag or commit"},
		{"empty ref", tr.templates, "", "no such branch, tag or commit"},
		{"templates absent at ref", tr.templates, tr.commits[0].String(), "skills/build/templates does not exist at commit " + tr.commits[0].String()[:12]},
		{"not a repository", notRepo, "main", "is not inside a git repository"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			err := ExtractRef(tt.dir, tt.ref, out)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantErr)
			assert.NotContains(t, err.Error(), "\n")
			assert.NoDirExists(t, out, "nothing written before the ref is checked")
			_, err = CheckRef(tt.dir, tt.ref)
			assert.ErrorContains(t, err, tt.wantErr, "CheckRef fails the same way, read-only")
		})
	}
}

func TestCheckRef(t *testing.T) {
	t.Parallel()
	tr := newTemplateRepo(t)
	h, err := CheckRef(tr.templates, "v1")
	require.NoError(t, err)
	assert.Equal(t, tr.commits[1], h)
}

func TestDestPath(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"../x", "a/../../x", "/abs", "", "a//b", "a/./b", "a\\b", "a\x00b"} {
		_, err := destPath("/dest", bad)
		assert.Error(t, err, bad)
	}
	p, err := destPath("/dest", "sub/part.md")
	require.NoError(t, err)
	assert.Equal(t, filepath.Join("/dest", "sub", "part.md"), p)
}
