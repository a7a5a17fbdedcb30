package share

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/replaytool/replay/internal/errkind"
	"github.com/replaytool/replay/internal/platform"
	"github.com/replaytool/replay/manifest"
	"github.com/replaytool/replay/pipeline"
)

// Source says where a run to push is, as the other commands are told: PATH
// (a manifest, dispatch dir or scratch dir; "" for the project's own), and the
// roots and overrides of pipeline.Locator.
type Source struct {
	Path, Home, Tmp, SysTmp, Cwd string
	Repo, Scratch, Shadow        string
}

// snapshot is a run found on disk: its index (files without content yet)
// and where each file is.
type snapshot struct {
	index   *Index
	local   map[string]localFile // by index path
	shadow  string               // the shadow repository, "" without one
	skipped []string             // links, what is not a regular file, bad names
}

// localFile is one file of the run on disk, as lstat saw it.
type localFile struct {
	abs  string
	size int64
	stat string
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
	snap := &snapshot{local: map[string]localFile{}}
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
	mf, ok := snap.local[ix.Manifest]
	if !ok {
		return nil, errkind.Errorf(ErrNoRun, "%s: the manifest was not read (a link or not a regular file?)", loc.ManifestPath)
	}
	first, err := firstLine(mf.abs)
	if err != nil {
		return nil, err
	}
	idDir := loc.DispatchDir
	if loc.ScratchDir != "" {
		idDir = scratch
	}
	if ix.ProjectID, err = ProjectID(lc.ProjectDir(), idDir); err != nil {
		return nil, errkind.Errorf(ErrNoRun, "%v", err)
	}
	idRel := "memory/" + ProjectIDFile
	if idDir != scratch {
		idRel = dispatchRel + "/" + ProjectIDFile
	}
	if _, err := os.Lstat(filepath.Join(idDir, ProjectIDFile)); err == nil {
		if _, ok := snap.local[idRel]; !ok {
			if err := snap.addFile(filepath.Join(idDir, ProjectIDFile), idRel); err != nil {
				return nil, err
			}
		}
	}
	ix.Run = RunID(loc.SessionID, ix.ProjectID, first)
	if dir := lc.ShadowDir(); dir != "" {
		if _, err := os.Stat(filepath.Join(dir, "HEAD")); err == nil {
			snap.shadow = dir
			if _, err := os.Lstat(filepath.Join(dir, shadowManifest)); err == nil {
				if err := snap.addFile(filepath.Join(dir, shadowManifest), "checkpoints/"+shadowManifest); err != nil {
					return nil, err
				}
			}
		}
	}
	return snap, nil
}

// firstLine reads the manifest's first line (at most 1 MiB of it).
func firstLine(p string) ([]byte, error) {
	f, err := platform.OpenNoFollow(p, os.O_RDONLY|platform.ONonBlock, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	n, err := io.ReadFull(f, buf)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	line, _, _ := bytes.Cut(buf[:n], []byte("\n"))
	return line, nil
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
	return name == manifest.MarkerFile || strings.HasPrefix(name, ".dispatch-active-") || name == ProjectIDFile
}

// addFile lists the regular file p as rel, after an lstat and a
// non-blocking open that does not follow a link (its content is read when
// pushed).
func (s *snapshot) addFile(p, rel string) error {
	if err := CheckPath(rel); err != nil {
		s.skipped = append(s.skipped, p)
		return nil
	}
	f, err := platform.OpenNoFollow(p, os.O_RDONLY|platform.ONonBlock, 0)
	if err != nil {
		if errors.Is(err, platform.ErrLink) || errors.Is(err, syscall.ENXIO) {
			s.skipped = append(s.skipped, p)
			return nil
		}
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
	mode := "0644"
	if st.Mode().Perm()&0o111 != 0 {
		mode = "0755"
	}
	s.index.Files = append(s.index.Files, File{Path: rel, Mode: mode, Blob: Blob{Size: st.Size()}})
	s.local[rel] = localFile{abs: p, size: st.Size(), stat: statLine(st)}
	return nil
}

// statLine is what says a file is unchanged on this machine: size, mtime,
// ctime, device and inode.
func statLine(st fs.FileInfo) string {
	sys, ok := platform.FileStat(st)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%d:%d:%d:%d:%d", st.Size(), st.ModTime().UnixNano(), sys.Ctime.UnixNano(), sys.Dev, sys.Ino)
}

func (s *snapshot) hasDir(rel string) bool {
	for _, f := range s.index.Files {
		if strings.HasPrefix(f.Path, rel+"/") {
			return true
		}
	}
	return false
}
