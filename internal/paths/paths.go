package paths

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
)

// ProjectHash returns <H>: the first 16 hex characters of sha256 of the absolute
// project working directory.
func ProjectHash(projectDir string) string {
	abs, err := filepath.Abs(projectDir)
	if err != nil {
		abs = projectDir
	}
	sum := sha256.Sum256([]byte(abs))
	return hex.EncodeToString(sum[:])[:16]
}

// ProjectRoot returns $HOME/.claude/projects/<H>.
func ProjectRoot(home, projectDir string) string {
	return filepath.Join(home, ".claude", "projects", ProjectHash(projectDir))
}

// ScratchDir returns $HOME/.claude/projects/<H>/memory.
func ScratchDir(home, projectDir string) string {
	return filepath.Join(ProjectRoot(home, projectDir), "memory")
}

// ShadowDir returns $HOME/.claude/projects/<H>/checkpoints/<H>, the shadow git dir.
func ShadowDir(home, projectDir string) string {
	return filepath.Join(ProjectRoot(home, projectDir), "checkpoints", ProjectHash(projectDir))
}

// CheckpointManifest returns the checkpoint-manifest.md path beside the shadow git dir.
func CheckpointManifest(shadowDir string) string {
	return filepath.Join(filepath.Dir(shadowDir), "checkpoint-manifest.md")
}

// LiveDispatchDir returns $TMPDIR/crucible-dispatch-<sid>.
func LiveDispatchDir(tmp, sessionID string) string {
	return filepath.Join(tmp, "crucible-dispatch-"+sessionID)
}

// DurableDispatchDir returns <scratch>/crucible-dispatch-<sid>, the durable copy.
func DurableDispatchDir(scratch, sessionID string) string {
	return filepath.Join(scratch, "crucible-dispatch-"+sessionID)
}

// BuildModeFile returns $TMPDIR/crucible-build-mode.md.
func BuildModeFile(tmp string) string {
	return filepath.Join(tmp, "crucible-build-mode.md")
}
