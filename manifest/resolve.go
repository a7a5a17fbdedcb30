package manifest

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/replaytool/replay/internal/errkind"
	"github.com/replaytool/replay/internal/paths"
	"github.com/replaytool/replay/internal/runfile"
)

// ResolveOptions are the roots path resolution needs: $HOME, $TMPDIR and the
// current directory (the project when no PATH is given).
type ResolveOptions struct {
	Home string
	Tmp  string
	// SysTmp is the fixed system temporary root; "/tmp" when empty.
	SysTmp string
	Cwd    string
}

// Location is where a PATH argument led: the manifest to read and what surrounds it.
type Location struct {
	ManifestPath string
	DispatchDir  string
	// ScratchDir is the pipeline's scratch directory when known, else empty.
	ScratchDir string
	// Marker is the scratch dir's .pipeline-active when one was read.
	Marker    *Marker
	SessionID string
	// Live is true when the manifest is the live $TMPDIR copy, not the durable one.
	Live bool
	// Notes are choices the resolver made that the user should hear about.
	Notes []string
}

// Resolve turns a PATH argument into a Location (SPEC §3): a manifest.jsonl file; a
// directory containing one; a directory with crucible-dispatch-*/ or dispatch-*/
// subdirectories holding one (the newest session wins); a scratch directory whose
// .pipeline-active names the dispatch dir, preferring the durable scratch copy over
// the live $TMPDIR one. An empty arg means the current project's scratch dir.
// Nothing found is an error that maps to exit 4.
func Resolve(arg string, opts ResolveOptions) (*Location, error) {
	if arg == "" {
		if opts.Home == "" {
			return nil, errkind.New(ErrNoManifest, "no PATH given and $HOME is not set; pass the manifest or dispatch directory. Manifest not found. Cannot resume.")
		}
		arg = ProjectScratchDir(opts.Home, opts.Cwd)
		if !exists(arg) {
			return nil, errkind.New(ErrNoManifest, fmt.Sprintf("%s: no scratch directory for the project %s; pass the manifest or dispatch directory as PATH. Manifest not found. Cannot resume.", arg, opts.Cwd))
		}
	}
	if !filepath.IsAbs(arg) && opts.Cwd != "" {
		arg = filepath.Join(opts.Cwd, arg)
	}
	arg = filepath.Clean(arg)
	st, err := os.Stat(arg)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errkind.New(ErrNoManifest, fmt.Sprintf("%s: no such file or directory. Manifest not found. Cannot resume.", arg))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", arg, err)
	}
	r := resolver{opts: opts}
	if !st.IsDir() {
		if filepath.Base(arg) == MarkerFile {
			return r.fromScratch(filepath.Dir(arg))
		}
		return r.fromManifest(arg)
	}
	// exists, not isFile: a manifest or marker that is a FIFO or a device must be
	// refused by its reader with a clear error, never skipped (that would skip the
	// branch guard its marker carries).
	if m := filepath.Join(arg, ManifestFile); exists(m) {
		return r.fromManifest(m)
	}
	if exists(filepath.Join(arg, MarkerFile)) {
		return r.fromScratch(arg)
	}
	if loc, err := r.fromDispatchActive(arg); loc != nil || err != nil {
		return loc, err
	}
	if loc, err := r.newestSubdir(arg); loc != nil || err != nil {
		return loc, err
	}
	return nil, errkind.New(ErrNoManifest, fmt.Sprintf("%s: no manifest.jsonl, crucible-dispatch-*/manifest.jsonl, dispatch-*/manifest.jsonl or .pipeline-active here. Manifest not found. Cannot resume.", arg))
}

type resolver struct{ opts ResolveOptions }

func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// tmpRoots are the directories a live dispatch dir may sit in.
func (r resolver) tmpRoots() []string {
	roots := []string{paths.SystemTmp}
	if r.opts.SysTmp != "" {
		roots[0] = r.opts.SysTmp
	}
	if r.opts.Tmp != "" {
		roots = append(roots, r.opts.Tmp)
	}
	return roots
}

func (r resolver) isLive(dispatchDir string) bool {
	return underARoot(filepath.Dir(dispatchDir), r.tmpRoots())
}

// fromManifest describes a manifest file found directly. A marker beside it that
// cannot be read is an error: the branch guard it carries is never skipped.
func (r resolver) fromManifest(path string) (*Location, error) {
	dir := filepath.Dir(path)
	loc := &Location{ManifestPath: path, DispatchDir: dir, Live: r.isLive(dir)}
	loc.SessionID, _ = SessionOfDir(dir)
	parent := filepath.Dir(dir)
	if exists(filepath.Join(parent, MarkerFile)) && !loc.Live {
		loc.ScratchDir = parent
	} else if r.opts.Home != "" && loc.SessionID != "" {
		if s := ProjectScratchDir(r.opts.Home, r.opts.Cwd); exists(filepath.Join(s, MarkerFile)) {
			m, err := ReadMarker(filepath.Join(s, MarkerFile))
			if err != nil {
				return nil, err
			}
			if markerSession(m) == loc.SessionID {
				loc.ScratchDir = s
			}
		}
	}
	if loc.ScratchDir != "" {
		m, err := ReadMarker(filepath.Join(loc.ScratchDir, MarkerFile))
		if err != nil {
			return nil, err
		}
		loc.Marker = m
	}
	return loc, nil
}

// markerSession is the session id a marker names: pipeline_id, or the suffix of its
// dispatch_dir.
func markerSession(m *Marker) string {
	if m.PipelineID != "" {
		return m.PipelineID
	}
	sid, _ := SessionOfDir(m.DispatchDir)
	return sid
}

// fromScratch follows a scratch dir's marker to its manifest: the durable copy first.
func (r resolver) fromScratch(scratch string) (*Location, error) {
	markerPath := filepath.Join(scratch, MarkerFile)
	m, err := ReadMarker(markerPath)
	if err != nil {
		return nil, err
	}
	sid := markerSession(m)
	live := ""
	var outside error // the marker's live dir lies outside every root: only a durable copy will do
	if m.DispatchDir != "" {
		live, err = ValidateDispatchDir(markerPath, m.DispatchDir, append(r.tmpRoots(), scratch)...)
		if err != nil && !liveDirElsewhere(m.DispatchDir, sid) {
			return nil, err
		}
		if err != nil {
			// A $TMPDIR other than the run's puts its live dir out of reach; the durable
			// copy in the scratch dir is still the run. The live dir is never read.
			outside, live = err, ""
		} else if sid == "" {
			sid, _ = SessionOfDir(live)
		}
	} else if r.opts.Tmp != "" {
		live = paths.LiveDispatchDir(r.opts.Tmp, sid)
	}
	if strings.ContainsAny(sid, `/\`) || sid == "." || sid == ".." {
		return nil, unsafePath("%s: field \"pipeline_id\" %q is not a session id; fix the marker", markerPath, clip(sid, 40))
	}
	candidates := []string{
		paths.DurableDispatchDir(scratch, sid),
		filepath.Join(scratch, "dispatch-"+sid),
	}
	if live != "" {
		candidates = append(candidates, live)
	}
	for _, dir := range candidates {
		if mp := filepath.Join(dir, ManifestFile); exists(mp) && sid != "" {
			loc := &Location{ManifestPath: mp, DispatchDir: dir, ScratchDir: scratch, Marker: m, SessionID: sid, Live: dir == live && r.isLive(dir)}
			if outside != nil {
				loc.Notes = append(loc.Notes, fmt.Sprintf("%s names the live dispatch directory %s, outside the scratch directory and $TMPDIR (was the run started with another $TMPDIR?); using the durable copy %s", markerPath, clip(m.DispatchDir, 200), dir))
			}
			return loc, nil
		}
	}
	if outside != nil {
		return nil, outside
	}
	return nil, errkind.New(ErrNoManifest, fmt.Sprintf("%s names session %s, but none of %s has a manifest.jsonl. Manifest not found. Cannot resume.", markerPath, sid, strings.Join(candidates, ", ")))
}

// newestSubdir picks the newest session among dir's dispatch subdirectories; nil
// when there is none.
func (r resolver) newestSubdir(dir string) (*Location, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil
	}
	type found struct{ name, sid string }
	var all []found
	for _, d := range entries {
		sid, ok := SessionOfDir(d.Name())
		if ok && d.IsDir() && isFile(filepath.Join(dir, d.Name(), ManifestFile)) {
			all = append(all, found{d.Name(), sid})
		}
	}
	if len(all) == 0 {
		return nil, nil
	}
	sort.SliceStable(all, func(i, j int) bool {
		if c := compareSessions(all[i].sid, all[j].sid); c != 0 {
			return c > 0
		}
		return strings.HasPrefix(all[i].name, "crucible-") && !strings.HasPrefix(all[j].name, "crucible-")
	})
	pick := all[0]
	loc, err := r.fromManifest(filepath.Join(dir, pick.name, ManifestFile))
	if err != nil {
		return nil, err
	}
	if loc.ScratchDir == "" && !underARoot(dir, r.tmpRoots()) {
		loc.ScratchDir = dir
	}
	if len(all) > 1 {
		others := make([]string, 0, len(all)-1)
		for _, f := range all[1:] {
			others = append(others, f.name)
		}
		loc.Notes = append(loc.Notes, fmt.Sprintf("%s holds %d dispatch directories; using the newest session, %s (also there: %s)", dir, len(all), pick.name, strings.Join(others, ", ")))
	}
	return loc, nil
}

// compareSessions orders session ids: numerically when both are numbers (epoch
// seconds), else as text.
func compareSessions(a, b string) int {
	na, errA := strconv.ParseUint(a, 10, 64)
	nb, errB := strconv.ParseUint(b, 10, 64)
	if errA == nil && errB == nil {
		switch {
		case na < nb:
			return -1
		case na > nb:
			return 1
		}
		return 0
	}
	return strings.Compare(a, b)
}

// ProjectScratchDir returns the scratch directory of the project at dir:
// $HOME/.claude/projects/<H>/memory with <H> hashed from the real path (symlinks
// resolved, as Crucible hashes it), else from the path as given when only that one
// exists. When neither exists it returns the real-path form.
func ProjectScratchDir(home, dir string) string {
	forms := paths.ProjectForms(dir)
	for _, f := range forms {
		if s := paths.ScratchDir(home, f); exists(s) {
			return s
		}
	}
	return paths.ScratchDir(home, forms[0])
}

// ProjectShadowDir is ProjectScratchDir for the shadow checkpoint repository.
func ProjectShadowDir(home, dir string) string {
	forms := paths.ProjectForms(dir)
	for _, f := range forms {
		if s := paths.ShadowDir(home, f); exists(s) {
			return s
		}
	}
	return paths.ShadowDir(home, forms[0])
}

// fromDispatchActive finds the pipeline of a scratch directory that has no
// .pipeline-active but a .dispatch-active-<sid> file (newest session first): the
// durable copy of the dispatch directory, else the one the file names. nil when the
// directory has no such file.
func (r resolver) fromDispatchActive(scratch string) (*Location, error) {
	sids, err := ReadDispatchActive(scratch)
	if err != nil || len(sids) == 0 {
		return nil, err
	}
	sort.SliceStable(sids, func(i, j int) bool { return compareSessions(sids[i], sids[j]) > 0 })
	var tried []string
	for _, sid := range sids {
		if strings.ContainsAny(sid, `/\`) || sid == "." || sid == ".." {
			continue
		}
		file := filepath.Join(scratch, DispatchActivePrefix+sid)
		candidates := []string{paths.DurableDispatchDir(scratch, sid), filepath.Join(scratch, "dispatch-"+sid)}
		live := ""
		if named := dispatchActiveDir(file); named != "" {
			dir, err := ValidateDispatchDir(file, named, append(r.tmpRoots(), scratch)...)
			if err != nil {
				return nil, err
			}
			live = dir
			candidates = append(candidates, dir)
		} else {
			for _, root := range r.tmpRoots() {
				candidates = append(candidates, paths.LiveDispatchDir(root, sid))
			}
		}
		for _, dir := range candidates {
			if mp := filepath.Join(dir, ManifestFile); isFile(mp) {
				loc := &Location{ManifestPath: mp, DispatchDir: dir, ScratchDir: scratch, SessionID: sid, Live: dir == live && r.isLive(dir)}
				loc.Notes = append(loc.Notes, fmt.Sprintf("%s has no %s; the pipeline was found through %s", scratch, MarkerFile, filepath.Base(file)))
				return loc, nil
			}
		}
		tried = append(tried, candidates...)
	}
	return nil, errkind.New(ErrNoManifest, fmt.Sprintf("%s: the .dispatch-active-* files name sessions whose dispatch directories have no manifest.jsonl (looked in %s). Manifest not found. Cannot resume.", scratch, strings.Join(tried, ", ")))
}

// liveDirElsewhere reports whether a marker's dispatch_dir that lies outside every
// root still has the shape of the run's own live directory somewhere else (a run
// started under another $TMPDIR): an absolute, clean path, not a symlink, ending in
// crucible-dispatch-<sid> or dispatch-<sid> of the marker's own session. Only then
// may the durable copy stand in for it; any other value stays an error.
func liveDirElsewhere(named, sid string) bool {
	trimmed := strings.TrimRight(named, "/")
	if sid == "" || !filepath.IsAbs(trimmed) || filepath.Clean(trimmed) != trimmed {
		return false
	}
	if got, ok := SessionOfDir(trimmed); !ok || got != sid {
		return false
	}
	st, err := os.Lstat(trimmed)
	return err != nil || st.Mode()&os.ModeSymlink == 0
}

// dispatchActiveDir reads the dispatch directory a .dispatch-active-<sid> file
// names ("dispatch-dir: <path>", also spelled dispatch_dir); "" when it names none.
func dispatchActiveDir(path string) string {
	head, err := runfile.ReadHead(path, runfile.Marker, 4096)
	if err != nil {
		return ""
	}
	return ParseDispatchActive(head)
}

// ParseDispatchActive returns the dispatch directory a .dispatch-active-<sid> file
// names: its "dispatch-dir:" line (also spelled dispatch_dir), trimmed; "" when it
// names none. Crucible writes two lines, dispatch-dir and seq.
func ParseDispatchActive(data []byte) string {
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		key := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(k)), "_", "-")
		if key == "dispatch-dir" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
