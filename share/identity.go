package share

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/replaytool/replay/internal/platform"
	"github.com/replaytool/replay/pipeline"
)

// ProjectIDFile is the file in a run's scratch dir that holds the project's
// stored random identity when the project is not a git repository.
const ProjectIDFile = ".replay-project-id"

// RunID is a run's id in a store: the session id, a dash and the first 12 hex
// digits of the sha256 of the project's identity and the manifest's first
// line. Manifests are append-only, so the id stays the same as the run grows;
// two projects (different root commits or stored ids) never share an id, and
// every clone of one project gives its run the same id.
func RunID(session, projectID string, manifestData []byte) string {
	first, _, _ := strings.Cut(string(manifestData), "\n")
	sum := sha256.Sum256([]byte(projectID + "\n" + first))
	return session + "-" + hex.EncodeToString(sum[:])[:12]
}

// ProjectID returns the identity of the project in dir, the same in each of
// its clones: "git:<root commit>" (the first-parent root of HEAD), or when
// dir is not a git repository with a commit, "id:<32 hex>" read from
// idDir/.replay-project-id, created there (once) when absent.
func ProjectID(dir, idDir string) (string, error) {
	if root, err := pipeline.RootCommit(dir); err == nil {
		return "git:" + root.String(), nil
	}
	if idDir == "" {
		return "", fmt.Errorf("%s is not a git repository with a commit, and the run has no folder to keep a project id in", dir)
	}
	p := filepath.Join(idDir, ProjectIDFile)
	if id, err := readProjectID(p); err == nil {
		return id, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	var raw [16]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", err
	}
	id := "id:" + hex.EncodeToString(raw[:])
	f, err := platform.OpenNoFollow(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) { // another push made it first
		return readProjectID(p)
	}
	if err != nil {
		return "", fmt.Errorf("%s: keeping the project's id: %w", p, err)
	}
	if _, err := f.WriteString(id + "\n"); err != nil {
		f.Close()
		return "", fmt.Errorf("%s: %w", p, err)
	}
	return id, f.Close()
}

func readProjectID(p string) (string, error) {
	f, err := platform.OpenNoFollow(p, os.O_RDONLY|platform.ONonBlock, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	buf := make([]byte, 64)
	n, _ := f.Read(buf)
	id := strings.TrimSpace(string(buf[:n]))
	if checkProjectID(id) != nil || !strings.HasPrefix(id, "id:") {
		return "", fmt.Errorf("%s: %q is not a project id (id:<32 hex>): remove the file and push again", p, clip(id))
	}
	return id, nil
}

func checkProjectID(id string) error {
	switch {
	case strings.HasPrefix(id, "git:") && isHex(id[4:], 40):
	case strings.HasPrefix(id, "id:") && isHex(id[3:], 32):
	default:
		return fmt.Errorf("%q is not git:<40 hex> or id:<32 hex>", clip(id))
	}
	return nil
}
