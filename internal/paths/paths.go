package paths

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
)

// ProjectHash returns <H>: the first 16 hex characters of sha256 of the absolute
// project working directory, as given (see RealPath for the form Crucible hashes).
func ProjectHash(projectDir string) string {
	abs, err := filepath.Abs(projectDir)
	if err != nil {
		abs = projectDir
	}
	sum := sha256.Sum256([]byte(abs))
	return hex.EncodeToString(sum[:])[:16]
}

// RealPath returns the absolute project path with every symlink resolved, the form
// Crucible hashes for <H>; the cleaned absolute path when it cannot be resolved.
func RealPath(projectDir string) string {
	abs, err := filepath.Abs(projectDir)
	if err != nil {
		abs = projectDir
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	return filepath.Clean(abs)
}

// ProjectForms returns the project paths <H> is looked up under, in order: the real
// path (symlinks resolved, what Crucible hashes), then the path as given ($PWD) when
// it differs.
func ProjectForms(projectDir string) []string {
	real := RealPath(projectDir)
	abs, err := filepath.Abs(projectDir)
	if err != nil || abs == real {
		return []string{real}
	}
	return []string{real, abs}
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

// CheckpointManifest returns the checkpoint-manifest.md path inside the shadow git
// dir, where Crucible keeps it (outside the git tree, rows only).
func CheckpointManifest(shadowDir string) string {
	return filepath.Join(shadowDir, "checkpoint-manifest.md")
}

// LegacyCheckpointManifest returns the checkpoint-manifest.md path beside the shadow
// git dir, where earlier versions of replay wrote it; it is still read.
func LegacyCheckpointManifest(shadowDir string) string {
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

// BuildModeFile returns <tmp>/crucible-build-mode.md for one temporary root.
func BuildModeFile(tmp string) string {
	return filepath.Join(tmp, "crucible-build-mode.md")
}

// SystemTmp is the fixed temporary root Crucible writes the build-mode file to.
const SystemTmp = "/tmp"

// BuildModeFiles returns where the build-mode file is looked for, in order: the
// system root sysTmp (Crucible writes /tmp/crucible-build-mode.md), then $TMPDIR.
// An empty sysTmp means SystemTmp; the same directory is listed once.
func BuildModeFiles(sysTmp, tmp string) []string {
	if sysTmp == "" {
		sysTmp = SystemTmp
	}
	out := []string{BuildModeFile(sysTmp)}
	if tmp != "" && filepath.Clean(tmp) != filepath.Clean(sysTmp) {
		out = append(out, BuildModeFile(tmp))
	}
	return out
}
