package manifest

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/paths"
)

const okLine = `{"seq":1,"status":"completed"}` + "\n"

type resolveEnv struct {
	opts    ResolveOptions
	scratch string
}

func newResolveEnv(t *testing.T) resolveEnv {
	t.Helper()
	root := t.TempDir()
	opts := ResolveOptions{Home: filepath.Join(root, "home"), Tmp: filepath.Join(root, "tmp"), Cwd: filepath.Join(root, "project")}
	for _, d := range []string{opts.Home, opts.Tmp, opts.Cwd} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	return resolveEnv{opts: opts, scratch: paths.ScratchDir(opts.Home, opts.Cwd)}
}

func (r resolveEnv) marker(t *testing.T, dispatchDir string) {
	t.Helper()
	writeFile(t, r.scratch, MarkerFile, `{"pipeline_id":"1775430161","skill":"build","phase":"3","start_time":"t","scratch_dir":"`+r.scratch+`","dispatch_dir":"`+dispatchDir+`","branch":"feat/login","baseline_sha":"abc"}`)
}

// resolveSID is the session of the dispatch dirs resolveCases builds.
const resolveSID = "1775430161"

// resolveCases are the PATH forms Resolve accepts, each with the files it needs.
var resolveCases = []struct {
	name string
	// setup builds the files and returns the PATH argument.
	setup     func(t *testing.T, r resolveEnv) string
	wantPath  func(r resolveEnv) string
	wantLive  bool
	wantNotes int
}{
	{
		name: "manifest file",
		setup: func(t *testing.T, r resolveEnv) string {
			return writeFile(t, r.opts.Tmp, "crucible-dispatch-"+resolveSID+"/manifest.jsonl", okLine)
		},
		wantPath: func(r resolveEnv) string {
			return filepath.Join(r.opts.Tmp, "crucible-dispatch-"+resolveSID, ManifestFile)
		},
		wantLive: true,
	},
	{
		name: "dir with manifest",
		setup: func(t *testing.T, r resolveEnv) string {
			writeFile(t, r.opts.Cwd, "runs/a/manifest.jsonl", okLine)
			return filepath.Join(r.opts.Cwd, "runs/a")
		},
		wantPath: func(r resolveEnv) string { return filepath.Join(r.opts.Cwd, "runs/a", ManifestFile) },
	},
	{
		name: "dir with several dispatch subdirs picks the newest session",
		setup: func(t *testing.T, r resolveEnv) string {
			writeFile(t, r.opts.Cwd, "old/crucible-dispatch-999/manifest.jsonl", okLine)
			writeFile(t, r.opts.Cwd, "old/dispatch-1000/manifest.jsonl", okLine)
			writeFile(t, r.opts.Cwd, "old/crucible-dispatch-12/manifest.jsonl", okLine)
			require.NoError(t, os.MkdirAll(filepath.Join(r.opts.Cwd, "old/crucible-dispatch-5000"), 0o755)) // no manifest
			return filepath.Join(r.opts.Cwd, "old")
		},
		wantPath:  func(r resolveEnv) string { return filepath.Join(r.opts.Cwd, "old/dispatch-1000", ManifestFile) },
		wantNotes: 1,
	},
	{
		name: "scratch prefers the durable copy",
		setup: func(t *testing.T, r resolveEnv) string {
			live := filepath.Join(r.opts.Tmp, "crucible-dispatch-"+resolveSID)
			writeFile(t, live, ManifestFile, okLine)
			writeFile(t, r.scratch, "crucible-dispatch-"+resolveSID+"/manifest.jsonl", okLine)
			r.marker(t, live+"/")
			return r.scratch
		},
		wantPath: func(r resolveEnv) string {
			return filepath.Join(r.scratch, "crucible-dispatch-"+resolveSID, ManifestFile)
		},
	},
	{
		name: "scratch with an older dispatch- copy",
		setup: func(t *testing.T, r resolveEnv) string {
			writeFile(t, r.scratch, "dispatch-"+resolveSID+"/manifest.jsonl", okLine)
			r.marker(t, filepath.Join(r.opts.Tmp, "crucible-dispatch-"+resolveSID))
			return r.scratch
		},
		wantPath: func(r resolveEnv) string { return filepath.Join(r.scratch, "dispatch-"+resolveSID, ManifestFile) },
	},
	{
		name: "scratch falls back to the live dir",
		setup: func(t *testing.T, r resolveEnv) string {
			live := filepath.Join(r.opts.Tmp, "crucible-dispatch-"+resolveSID)
			writeFile(t, live, ManifestFile, okLine)
			r.marker(t, live)
			return filepath.Join(r.scratch, MarkerFile)
		},
		wantPath: func(r resolveEnv) string {
			return filepath.Join(r.opts.Tmp, "crucible-dispatch-"+resolveSID, ManifestFile)
		},
		wantLive: true,
	},
	{
		name: "no PATH: the project's scratch dir",
		setup: func(t *testing.T, r resolveEnv) string {
			writeFile(t, r.scratch, "crucible-dispatch-"+resolveSID+"/manifest.jsonl", okLine)
			r.marker(t, filepath.Join(r.opts.Tmp, "crucible-dispatch-"+resolveSID))
			return ""
		},
		wantPath: func(r resolveEnv) string {
			return filepath.Join(r.scratch, "crucible-dispatch-"+resolveSID, ManifestFile)
		},
	},
}

func TestResolve(t *testing.T) {
	t.Parallel()
	for _, tt := range resolveCases {
		t.Run(tt.name, func(t *testing.T) {
			r := newResolveEnv(t)
			arg := tt.setup(t, r)
			loc, err := Resolve(arg, r.opts)
			require.NoError(t, err)
			assert.Equal(t, tt.wantPath(r), loc.ManifestPath)
			assert.Equal(t, filepath.Dir(loc.ManifestPath), loc.DispatchDir)
			assert.Equal(t, tt.wantLive, loc.Live)
			assert.Len(t, loc.Notes, tt.wantNotes)
			sid, _ := SessionOfDir(loc.DispatchDir)
			assert.Equal(t, sid, loc.SessionID)
		})
	}
}

func TestResolveScratchFillsMarker(t *testing.T) {
	t.Parallel()
	r := newResolveEnv(t)
	writeFile(t, r.scratch, "crucible-dispatch-1775430161/manifest.jsonl", okLine)
	r.marker(t, filepath.Join(r.opts.Tmp, "crucible-dispatch-1775430161"))
	loc, err := Resolve(r.scratch, r.opts)
	require.NoError(t, err)
	require.NotNil(t, loc.Marker)
	assert.Equal(t, "feat/login", loc.Marker.Branch)
	assert.Equal(t, r.scratch, loc.ScratchDir)
	assert.Equal(t, "1775430161", loc.SessionID)

	// Given the durable dispatch dir itself, the scratch dir and marker are found too.
	loc, err = Resolve(filepath.Join(r.scratch, "crucible-dispatch-1775430161"), r.opts)
	require.NoError(t, err)
	assert.Equal(t, r.scratch, loc.ScratchDir)
	require.NotNil(t, loc.Marker)
}

func TestResolveNothingFound(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		setup func(t *testing.T, r resolveEnv) string
		want  string
	}{
		{name: "missing path", setup: func(t *testing.T, r resolveEnv) string { return filepath.Join(r.opts.Cwd, "nope") }, want: "no such file or directory"},
		{name: "empty dir", setup: func(t *testing.T, r resolveEnv) string { return r.opts.Cwd }, want: "no manifest.jsonl, crucible-dispatch-*/manifest.jsonl"},
		{name: "no scratch for the project", setup: func(t *testing.T, r resolveEnv) string { return "" }, want: "no scratch directory for the project"},
		{name: "marker names nothing on disk", setup: func(t *testing.T, r resolveEnv) string {
			r.marker(t, filepath.Join(r.opts.Tmp, "crucible-dispatch-1775430161"))
			return r.scratch
		}, want: "names session 1775430161, but none of"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newResolveEnv(t)
			_, err := Resolve(tt.setup(t, r), r.opts)
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrNoManifest)
			assert.Contains(t, err.Error(), tt.want)
			assert.Contains(t, err.Error(), "Manifest not found. Cannot resume.")
		})
	}
}

func TestResolveRefusesMarkerDispatchDirOutside(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		dir  func(r resolveEnv) string
		want string
	}{
		{name: "etc", dir: func(resolveEnv) string { return "/etc" }, want: "is not a crucible-dispatch-* or dispatch-* directory"},
		{name: "dot dot", dir: func(r resolveEnv) string { return r.opts.Tmp + "/../../crucible-dispatch-1" }, want: "is not inside the scratch directory or $TMPDIR"},
		{name: "relative", dir: func(resolveEnv) string { return "../../etc/passwd" }, want: "is not an absolute path"},
		{name: "elsewhere", dir: func(r resolveEnv) string { return filepath.Join(r.opts.Home, "crucible-dispatch-1") }, want: "is not inside"},
		{name: "symlink out", dir: func(r resolveEnv) string {
			link := filepath.Join(r.opts.Tmp, "crucible-dispatch-1775430161")
			_ = os.Symlink(r.opts.Home, link)
			return link
		}, want: "is not"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newResolveEnv(t)
			writeFile(t, r.scratch, "crucible-dispatch-1775430161/manifest.jsonl", okLine)
			r.marker(t, tt.dir(r))
			_, err := Resolve(r.scratch, r.opts)
			require.Error(t, err)
			assert.True(t, errors.Is(err, ErrUnsafePath))
			assert.Contains(t, err.Error(), filepath.Join(r.scratch, MarkerFile)+`: field "dispatch_dir"`)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestSafeJoin(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	outside := t.TempDir()
	writeFile(t, dir, "11-build-implementer.md", "x")
	writeFile(t, outside, "secret", "x")
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "out")))
	require.NoError(t, os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, "12-link.md")))
	require.NoError(t, os.Symlink("11-build-implementer.md", filepath.Join(dir, "13-ok-link.md")))

	tests := []struct {
		name, in, errSub string
	}{
		{name: "plain", in: "11-build-implementer.md"},
		{name: "not there yet", in: "14-new.md"},
		{name: "link inside", in: "13-ok-link.md"},
		{name: "dot dot", in: "../../etc/passwd", errSub: "leaves"},
		{name: "dot dot inside", in: "a/../../x", errSub: "leaves"},
		{name: "absolute", in: "/etc/passwd", errSub: "absolute path"},
		{name: "empty", in: "", errSub: "empty path"},
		{name: "symlinked dir out", in: "out/secret", errSub: "a symlink out"},
		{name: "symlinked dir out, new file", in: "out/new", errSub: "a symlink out"},
		{name: "symlinked file out", in: "12-link.md", errSub: "a symlink out"},
		{name: "nul", in: "a\x00b", errSub: "leaves"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SafeJoin(dir, tt.in)
			if tt.errSub != "" {
				require.Error(t, err)
				assert.True(t, errors.Is(err, ErrUnsafePath))
				assert.Contains(t, err.Error(), tt.errSub)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, filepath.Join(dir, tt.in), got)
		})
	}
}

// SafeJoin resolves only the components of the name below a directory it
// resolved whole (resolveBelow): for every kind of component (missing, a file
// in the middle, a link inside, out, dangling, looping, a linked directory)
// the result equals resolving the whole joined path (resolveExisting), also
// when the directory itself is reached through a link.
func TestResolveBelowEqualsResolveExisting(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	dir := filepath.Join(base, "scratch", "crucible-dispatch-1")
	outside := filepath.Join(base, "outside")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "sub", "deeper"), 0o755))
	require.NoError(t, os.MkdirAll(outside, 0o755))
	writeFile(t, dir, "1-a.md", "x")
	writeFile(t, filepath.Join(dir, "sub"), "2-b.md", "x")
	writeFile(t, outside, "secret", "x")
	for link, target := range map[string]string{
		"out":          outside,
		"out-rel":      "../../outside",
		"in":           "sub",
		"in-abs":       filepath.Join(dir, "sub"),
		"file-link":    "1-a.md",
		"dangling":     "nowhere",
		"loop":         "loop",
		"sub/up":       "..",
		"sub/out-deep": "../../../outside/secret",
	} {
		require.NoError(t, os.Symlink(target, filepath.Join(dir, link)))
	}
	viaLink := filepath.Join(base, "via")
	require.NoError(t, os.Symlink(filepath.Join(base, "scratch"), viaLink))
	names := []string{
		"1-a.md", "new.md", "sub", "sub/2-b.md", "sub/deeper", "sub/deeper/new", "sub/new/newer",
		"1-a.md/x", "1-a.md/x/y", "out", "out/secret", "out/new", "out-rel/secret", "in", "in/2-b.md",
		"in-abs/2-b.md", "file-link", "file-link/x", "dangling", "dangling/x", "loop", "loop/x",
		"sub/up/1-a.md", "sub/up/out/secret", "sub/out-deep",
	}
	for _, d := range []string{dir, filepath.Join(viaLink, "crucible-dispatch-1")} {
		root, whole := resolveDir(d)
		require.True(t, whole, d)
		for _, name := range names {
			joined := filepath.Join(d, name)
			assert.Equal(t, resolveExisting(joined), resolveBelow(root, joined, name), "%s in %s", name, d)
		}
	}
	// a directory not all there is resolved as before (resolveExisting)
	root, whole := resolveDir(filepath.Join(dir, "missing"))
	assert.False(t, whole)
	assert.Equal(t, resolveExisting(filepath.Join(dir, "missing")), root)
}

func TestEntryDispatchPath(t *testing.T) {
	t.Parallel()
	_, err := Entry{Seq: 7, File: "../../etc/passwd"}.DispatchPath(t.TempDir())
	require.Error(t, err)
	assert.Contains(t, err.Error(), `seq 7: field "file": "../../etc/passwd" leaves`)
}

// A run started under another $TMPDIR names a live dir outside every root: its
// durable copy stands in (the live dir is never read), with a note; without a
// durable copy it stays an error.
func TestResolveMarkerLiveDirUnderAnotherTmpdir(t *testing.T) {
	t.Parallel()
	r := newResolveEnv(t)
	other := filepath.Join(t.TempDir(), "old-tmp", "crucible-dispatch-1775430161") + "/"
	r.marker(t, other)
	_, err := Resolve(r.scratch, r.opts)
	require.Error(t, err, "no durable copy: the marker's dir is out of reach")
	assert.True(t, errors.Is(err, ErrUnsafePath))

	writeFile(t, r.scratch, "crucible-dispatch-1775430161/manifest.jsonl", okLine)
	loc, err := Resolve(r.scratch, r.opts)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(r.scratch, "crucible-dispatch-1775430161"), loc.DispatchDir)
	assert.False(t, loc.Live)
	require.Len(t, loc.Notes, 1)
	assert.Contains(t, loc.Notes[0], "was the run started with another $TMPDIR?); using the durable copy")
}
