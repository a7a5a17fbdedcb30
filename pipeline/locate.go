package pipeline

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/replaytool/replay/manifest"
)

// Locator answers, once and lazily, where a run's project, scratch and shadow
// directories are. It is the one place that decides them: Load, status and the
// checkpoint commands all ask it.
//
// The rule: the project is Repo, else Cwd. The scratch dir is Scratch, else the
// one the resolved manifest Location names, else the project's default under
// Home. The shadow repository is Shadow, else the checkpoints folder beside an
// explicit or located scratch dir, else the project's default under Home. Relative
// overrides are taken from Cwd. A run's files never choose the project directory.
type Locator struct {
	Home    string
	Cwd     string
	Repo    string
	Scratch string
	Shadow  string
	// Location, when set, is the manifest the user's PATH named: its scratch dir
	// is preferred to the project's default.
	Location *manifest.Location

	resolved                 bool
	project, scratch, shadow string
}

// abs makes p absolute from the Locator's Cwd; "" stays "".
func (l *Locator) abs(p string) string {
	if p == "" || filepath.IsAbs(p) || l.Cwd == "" {
		return p
	}
	return filepath.Join(l.Cwd, p)
}

func (l *Locator) resolve() {
	if l.resolved {
		return
	}
	l.resolved = true
	l.project = l.abs(l.Repo)
	if l.project == "" {
		l.project = l.Cwd
	}
	l.scratch = l.abs(l.Scratch)
	if l.scratch == "" && l.Location != nil {
		l.scratch = l.Location.ScratchDir
	}
	l.shadow = l.abs(l.Shadow)
	if l.shadow == "" && l.scratch != "" {
		root := filepath.Dir(l.scratch) // .../projects/<H>
		l.shadow = filepath.Join(root, "checkpoints", filepath.Base(root))
	}
	if l.scratch == "" && l.Home != "" {
		l.scratch = manifest.ProjectScratchDir(l.Home, l.project)
	}
	if l.shadow == "" && l.Home != "" {
		// <H> of the real path, as Crucible hashes it.
		l.shadow = manifest.ProjectShadowDir(l.Home, l.project)
	}
}

// ProjectDir returns the project's working tree.
func (l *Locator) ProjectDir() string {
	l.resolve()
	return l.project
}

// ScratchDir returns the pipeline's scratch directory; "" when neither an
// override, the run nor $HOME gives one.
func (l *Locator) ScratchDir() string {
	l.resolve()
	return l.scratch
}

// ShadowDir returns the shadow checkpoint repository; "" when neither an
// override, the scratch dir nor $HOME gives one.
func (l *Locator) ShadowDir() string {
	l.resolve()
	return l.shadow
}

// Marker returns the scratch dir's .pipeline-active, nil when there is none (or
// no scratch dir). An unreadable marker is returned with its error.
func (l *Locator) Marker() (*manifest.Marker, error) {
	scratch := l.ScratchDir()
	if scratch == "" {
		return nil, nil
	}
	path := filepath.Join(scratch, manifest.MarkerFile)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return manifest.ReadMarker(path)
}
