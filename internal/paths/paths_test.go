package paths

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestProjectHash(t *testing.T) {
	// sha256("/work/project") computed with sha256sum.
	assert.Len(t, ProjectHash("/work/project"), 16)
	assert.Equal(t, ProjectHash("/work/project"), ProjectHash("/work/project/"))
	assert.NotEqual(t, ProjectHash("/work/a"), ProjectHash("/work/b"))
	h := ProjectHash("/p")
	assert.Equal(t, "/home/u/.claude/projects/"+h+"/checkpoints/"+h, ShadowDir("/home/u", "/p"))
	assert.Equal(t, "/home/u/.claude/projects/"+h+"/checkpoints/"+h+"/checkpoint-manifest.md", CheckpointManifest(ShadowDir("/home/u", "/p")), "inside the shadow git dir, as Crucible keeps it")
	assert.Equal(t, "/home/u/.claude/projects/"+h+"/checkpoints/checkpoint-manifest.md", LegacyCheckpointManifest(ShadowDir("/home/u", "/p")))
	assert.Equal(t, "/tmp/x/crucible-dispatch-1775430161", LiveDispatchDir("/tmp/x", "1775430161"))
}

func TestProjectFormsResolvesSymlinks(t *testing.T) {
	t.Parallel()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(root, "project")
	link := filepath.Join(root, "link")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	assert.Equal(t, real, RealPath(link))
	assert.Equal(t, []string{real, link}, ProjectForms(link), "real path first, then the path as given")
	assert.Equal(t, []string{real}, ProjectForms(real))
	assert.Equal(t, []string{filepath.Join(root, "gone")}, ProjectForms(filepath.Join(root, "gone")), "an unresolvable path is used as given")
}

func TestBuildModeFiles(t *testing.T) {
	t.Parallel()
	assert.Equal(t, []string{"/tmp/crucible-build-mode.md", "/x/crucible-build-mode.md"}, BuildModeFiles("", "/x"))
	assert.Equal(t, []string{"/sys/crucible-build-mode.md", "/x/crucible-build-mode.md"}, BuildModeFiles("/sys", "/x"))
	assert.Equal(t, []string{"/tmp/crucible-build-mode.md"}, BuildModeFiles("/tmp", "/tmp/"), "one root listed once")
}
