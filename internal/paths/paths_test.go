package paths

import (
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
	assert.Equal(t, "/home/u/.claude/projects/"+h+"/checkpoints/checkpoint-manifest.md", CheckpointManifest(ShadowDir("/home/u", "/p")))
	assert.Equal(t, "/tmp/x/crucible-dispatch-1775430161", LiveDispatchDir("/tmp/x", "1775430161"))
}
