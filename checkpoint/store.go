package checkpoint

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/replaytool/replay/internal/gitrepo"
)

// ErrNoShadow is wrapped by Open when the shadow repository does not exist.
var ErrNoShadow = errors.New("no shadow checkpoint repository")

// DefaultBranch is the branch a new shadow repository's HEAD points to.
const DefaultBranch = plumbing.ReferenceName("refs/heads/main")

// Store is an open shadow checkpoint repository and the project it snapshots.
type Store struct {
	shadow     ShadowDir
	shadowDir  string
	projectDir string
	repo       *git.Repository
	storage    *filesystem.Storage
	objects    *objectStore

	fileProgress FileProgress

	projectOnce sync.Once
	project     *git.Repository
	projectErr  error

	treeMu      sync.Mutex // guards treeFilesOf and treeFiles, see commitFiles
	treeFilesOf plumbing.Hash
	treeFiles   []treeFile
}

// Open opens the existing shadow repository at shadowDir for the project at
// projectDir. It writes nothing. The error wraps ErrNoShadow when shadowDir does not
// exist or holds no repository.
func Open(shadowDir, projectDir string) (*Store, error) {
	shadow, err := ProveShadowDir(shadowDir)
	if err != nil {
		return nil, err
	}
	return OpenShadow(shadow, projectDir)
}

// OpenShadow is Open on a shadow directory its caller has already checked: a
// command checks its shadow once and opens it with the proof.
func OpenShadow(shadow ShadowDir, projectDir string) (*Store, error) {
	shadowAbs, projectAbs, err := absDirs(shadow, projectDir)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(shadowAbs, "HEAD")); err != nil {
		return nil, fmt.Errorf("%s: %w (create one with `replay checkpoint create --reason R`)", shadowAbs, ErrNoShadow)
	}
	return openStore(shadowAbs, projectAbs)
}

// OpenOrInit opens the shadow repository at shadow (checked: ProveShadowDir),
// creating it first when it does not exist: bare storage (nothing is written into
// the project), core.worktree set to the project and gc.auto=0 so no background
// repack ever runs. The shadow's owner is proved here, before the first write.
func OpenOrInit(shadow ShadowDir, projectDir string) (*Store, error) {
	shadowAbs, projectAbs, err := absDirs(shadow, projectDir)
	if err != nil {
		return nil, err
	}
	// Open reads, and may read a shadow into another directory (an A/B work tree);
	// OpenOrInit writes the shadow's refs and config, so the shadow must be proved
	// this project's first.
	if err := CheckShadowOwner(shadowAbs, projectAbs); err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(shadowAbs, "HEAD")); errors.Is(err, os.ErrNotExist) {
		if err := initShadow(shadowAbs, projectAbs); err != nil {
			return nil, err
		}
	}
	s, err := openStore(shadowAbs, projectAbs)
	if err != nil {
		return nil, err
	}
	return s, s.ensureConfig()
}

// absDirs returns the checked shadow's path and the project's absolute path, a
// directory.
func absDirs(shadow ShadowDir, projectDir string) (string, string, error) {
	shadowAbs, err := shadow.path()
	if err != nil {
		return "", "", err
	}
	projectAbs, err := filepath.Abs(projectDir)
	if err != nil {
		return "", "", fmt.Errorf("project directory %s: %w", projectDir, err)
	}
	st, err := os.Stat(projectAbs)
	if err != nil {
		return "", "", fmt.Errorf("project directory %s: %w", projectAbs, err)
	}
	if !st.IsDir() {
		return "", "", fmt.Errorf("project directory %s is not a directory; pass the project with --repo DIR", projectAbs)
	}
	return shadowAbs, projectAbs, nil
}

func newStorage(shadowAbs string) *filesystem.Storage {
	// Objects over smallObject in a pack (after a `git gc` of the shadow repository)
	// are read from the pack as they are used, not into memory whole.
	return filesystem.NewStorageWithOptions(gitrepo.NoWaitFS(gitrepo.LeanFS(osfs.New(shadowAbs))), cache.NewObjectLRUDefault(),
		filesystem.Options{LargeObjectThreshold: smallObject})
}

func initShadow(shadowAbs, projectAbs string) error {
	//replay:door the shadow directory, just proved by CheckShadowDir (no link in its layout) and CheckShadowOwner
	if err := os.MkdirAll(shadowAbs, 0o755); err != nil {
		return fmt.Errorf("creating the shadow repository %s: %w", shadowAbs, err)
	}
	// A nil worktree makes go-git init the storage bare: no .git is written anywhere.
	_, err := git.InitWithOptions(newStorage(shadowAbs), nil, git.InitOptions{DefaultBranch: DefaultBranch})
	if err != nil && !errors.Is(err, git.ErrRepositoryAlreadyExists) {
		return fmt.Errorf("creating the shadow repository %s: %w", shadowAbs, err)
	}
	return nil
}

func openStore(shadowAbs, projectAbs string) (*Store, error) {
	st := newStorage(shadowAbs)
	repo, err := git.Open(st, osfs.New(projectAbs))
	if errors.Is(err, git.ErrRepositoryNotExists) {
		return nil, fmt.Errorf("%s: %w (the directory holds no git repository)", shadowAbs, ErrNoShadow)
	}
	if err != nil {
		return nil, fmt.Errorf("opening the shadow repository %s: %w", shadowAbs, err)
	}
	return &Store{shadow: ShadowDir{shadowAbs}, shadowDir: shadowAbs, projectDir: projectAbs, repo: repo, storage: st, objects: newObjectStore(shadowAbs, st)}, nil
}

// ensureConfig sets core.worktree and gc.auto=0 when they are not set yet.
func (s *Store) ensureConfig() error {
	cfg, err := s.storage.Config()
	if err != nil {
		return fmt.Errorf("%s: reading the shadow config: %w", filepath.Join(s.shadowDir, "config"), err)
	}
	changed := false
	if cfg.Core.Worktree != s.projectDir {
		cfg.Core.Worktree, cfg.Core.IsBare, changed = s.projectDir, false, true
	}
	if s.recordIdentity(cfg) {
		changed = true
	}
	if cfg.Raw.Section("gc").Option("auto") != "0" {
		cfg.Raw.Section("gc").SetOption("auto", "0")
		changed = true
	}
	if !changed {
		return nil
	}
	if err := s.storage.SetConfig(cfg); err != nil {
		return fmt.Errorf("%s: writing the shadow config: %w", filepath.Join(s.shadowDir, "config"), err)
	}
	return nil
}

// ShadowDir returns the absolute path of the shadow git directory.
func (s *Store) ShadowDir() string { return s.shadowDir }

// Shadow returns the shadow git directory as the check its opening passed.
func (s *Store) Shadow() ShadowDir { return s.shadow }

// ProjectDir returns the absolute path of the project working tree.
func (s *Store) ProjectDir() string { return s.projectDir }

// projectRepo opens the project's own git repository; nil (and no error) when the
// project is not a git repository.
func (s *Store) projectRepo() (*git.Repository, error) {
	s.projectOnce.Do(func() {
		//replay:door the project's own repository: the user's --repo or current directory
		s.project, s.projectErr = gitrepo.PlainOpen(s.projectDir)
		if errors.Is(s.projectErr, git.ErrRepositoryNotExists) {
			s.project, s.projectErr = nil, nil
		}
		if s.projectErr != nil {
			s.projectErr = fmt.Errorf("%s: opening the project repository: %w", s.projectDir, s.projectErr)
		}
	})
	return s.project, s.projectErr
}

// projectHead returns the project's HEAD commit, zero when it has none.
func (s *Store) projectHead() (plumbing.Hash, error) {
	pr, err := s.projectRepo()
	if err != nil || pr == nil {
		return plumbing.ZeroHash, err
	}
	ref, err := pr.Head()
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return plumbing.ZeroHash, nil
	}
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("%s: reading the project HEAD: %w", s.projectDir, err)
	}
	return ref.Hash(), nil
}

// CurrentBranch returns the project's current branch name (like `git branch
// --show-current`), empty on a detached HEAD or when the project is not a repository.
func (s *Store) CurrentBranch() (string, error) {
	ref, err := s.headRef()
	if err != nil {
		return "", err
	}
	if name := plumbing.ReferenceName(ref); name.IsBranch() {
		return name.Short(), nil
	}
	return "", nil
}
