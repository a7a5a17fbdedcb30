package share

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/replaytool/replay/internal/errkind"
	"github.com/replaytool/replay/manifest"
	"github.com/replaytool/replay/pipeline"
	"github.com/replaytool/replay/store"
)

// Source says where a run to push is, as the other commands are told: PATH
// (a manifest, dispatch dir or scratch dir; "" for the project's own), and the
// roots and overrides of pipeline.Locator.
type Source struct {
	Path, Home, Tmp, SysTmp, Cwd string
	Repo, Scratch, Shadow        string
}

// snapshot is a run read from disk: its index and the objects it names.
type snapshot struct {
	index   *Index
	objects map[string][]byte // sha256 hex -> content
	skipped []string          // symlinks and other non-regular files left out
}

func (s *snapshot) add(data []byte) string {
	sum := sha256.Sum256(data)
	h := hex.EncodeToString(sum[:])
	s.objects[h] = data
	return h
}

// RunID is a run's id in a store: the session id, a dash and the first 12 hex
// digits of the sha256 of the manifest's first line. Manifests are append-only,
// so the id stays the same as the run grows, and two projects whose sessions
// started in the same second still get different ids.
func RunID(session string, manifestData []byte) string {
	first, _, _ := bytes.Cut(manifestData, []byte("\n"))
	sum := sha256.Sum256(first)
	return session + "-" + hex.EncodeToString(sum[:])[:12]
}

// read locates the run at src and reads every file of it.
func read(src Source) (*snapshot, error) {
	loc, err := manifest.Resolve(src.Path, manifest.ResolveOptions{Home: src.Home, Tmp: src.Tmp, SysTmp: src.SysTmp, Cwd: src.Cwd})
	if err != nil {
		return nil, err
	}
	lc := &pipeline.Locator{Home: src.Home, Cwd: src.Cwd, Repo: src.Repo, Scratch: src.Scratch, Shadow: src.Shadow, Location: loc}
	if !isDigits(loc.SessionID) {
		return nil, errkind.Errorf(ErrNoRun, "%s: the run's session id %q is not a Crucible session (epoch seconds); push a crucible-dispatch-<sid> run", loc.ManifestPath, loc.SessionID)
	}
	snap := &snapshot{objects: map[string][]byte{}}
	ix := &Index{Format: IndexFormat, Session: loc.SessionID, Project: projectHash(lc)}
	snap.index = ix
	scratch := lc.ScratchDir()
	if st, err := os.Stat(scratch); err == nil && st.IsDir() && loc.ScratchDir != "" {
		if err := snap.walk(scratch, "memory", true); err != nil {
			return nil, err
		}
	}
	dispatchRel := "memory/" + filepath.Base(loc.DispatchDir)
	if rel, ok := under(scratch, loc.DispatchDir); ok && loc.ScratchDir != "" {
		dispatchRel = "memory/" + rel
	} else if !snap.hasDir(dispatchRel) { // a durable copy in the scratch dir wins
		if err := snap.walk(loc.DispatchDir, dispatchRel, false); err != nil {
			return nil, err
		}
	}
	ix.Manifest = dispatchRel + "/" + filepath.Base(loc.ManifestPath)
	data, ok := snap.fileData(ix.Manifest)
	if !ok {
		return nil, errkind.Errorf(ErrNoRun, "%s: the manifest was not read (a link or not a regular file?)", loc.ManifestPath)
	}
	ix.Run = RunID(loc.SessionID, data)
	if err := snap.addShadow(lc.ShadowDir()); err != nil {
		return nil, err
	}
	return snap, nil
}

func (s *snapshot) hasDir(rel string) bool {
	for _, f := range s.index.Files {
		if strings.HasPrefix(f.Path, rel+"/") {
			return true
		}
	}
	return false
}

func (s *snapshot) fileData(p string) ([]byte, bool) {
	for _, f := range s.index.Files {
		if f.Path == p {
			return s.objects[f.SHA256], true
		}
	}
	return nil, false
}

// projectHash is <H>: the name of the scratch dir's parent when it has that
// shape, else the hash of the project directory.
func projectHash(lc *pipeline.Locator) string {
	if s := lc.ScratchDir(); s != "" {
		if h := filepath.Base(filepath.Dir(s)); isHex(h, 16) {
			return h
		}
	}
	sum := sha256.Sum256([]byte(lc.ProjectDir()))
	return hex.EncodeToString(sum[:])[:16]
}

func under(root, p string) (string, bool) {
	if root == "" {
		return "", false
	}
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// walk adds the regular files under dir as prefix/<rel>. Links are never
// followed (they are listed in skipped); worktrees and dot folders are left
// out (see skipDir); at the top of a scratch dir
// the only dot files kept are Crucible's markers.
func (s *snapshot) walk(dir, prefix string, scratch bool) error {
	return filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		if e.IsDir() {
			if skipDir(p, e.Name(), scratch) {
				return filepath.SkipDir
			}
			return nil
		}
		if !e.Type().IsRegular() {
			s.skipped = append(s.skipped, p)
			return nil
		}
		if strings.HasPrefix(e.Name(), ".") && !(scratch && !strings.Contains(rel, "/") && crucibleMarker(e.Name())) {
			return nil
		}
		return s.addFile(p, prefix+"/"+rel)
	})
}

// skipDir leaves out dot folders and, in a scratch dir, every git working
// tree or repository (a folder holding .git: replay's A/B and fork worktrees);
// the recordings and reports beside them are kept.
func skipDir(p, name string, scratch bool) bool {
	if strings.HasPrefix(name, ".") {
		return true
	}
	if !scratch {
		return false
	}
	_, err := os.Lstat(filepath.Join(p, ".git"))
	return err == nil
}

func crucibleMarker(name string) bool {
	return name == manifest.MarkerFile || strings.HasPrefix(name, ".dispatch-active-")
}

func (s *snapshot) addFile(p, rel string) error {
	if err := CheckPath(rel); err != nil {
		s.skipped = append(s.skipped, p)
		return nil
	}
	f, err := os.OpenFile(p, os.O_RDONLY|noFollow, 0)
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	if !st.Mode().IsRegular() {
		s.skipped = append(s.skipped, p)
		return nil
	}
	if st.Size() > store.MaxObject {
		return fmt.Errorf("%s: larger than %d bytes, too large to share", p, store.MaxObject)
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(f); err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	mode := "0644"
	if st.Mode().Perm()&0o111 != 0 {
		mode = "0755"
	}
	data := buf.Bytes()
	s.index.Files = append(s.index.Files, File{Path: rel, Mode: mode, Size: int64(len(data)), SHA256: s.add(data)})
	return nil
}

// addShadow bundles the shadow checkpoint repository, when there is one, and
// keeps its checkpoint-manifest.md.
func (s *snapshot) addShadow(dir string) error {
	if dir == "" {
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, "HEAD")); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if _, err := os.Lstat(filepath.Join(dir, shadowManifest)); err == nil {
		if err := s.addFile(filepath.Join(dir, shadowManifest), "checkpoints/"+shadowManifest); err != nil {
			return err
		}
	}
	st := filesystem.NewStorage(osfs.New(dir), cache.NewObjectLRUDefault())
	defer st.Close()
	var buf bytes.Buffer
	refs, err := WriteBundle(&buf, st)
	if err != nil {
		return fmt.Errorf("shadow checkpoint repository %s: %w", dir, err)
	}
	if refs == nil {
		return nil
	}
	b := &Bundle{Size: int64(buf.Len())}
	b.SHA256 = s.add(buf.Bytes())
	if head, err := st.Reference(plumbing.HEAD); err == nil && head.Type() == plumbing.SymbolicReference && validRefName(head.Target().String()) {
		b.Head = head.Target().String()
	}
	s.index.Checkpoints = b
	return nil
}
