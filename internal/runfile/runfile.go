package runfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/replaytool/replay/internal/platform"
)

// Kind names a kind of run file and the most bytes replay reads of it.
type Kind struct {
	// What is the file's name in messages, e.g. "pipeline marker".
	What string
	// Max is the largest size accepted, in bytes.
	Max int64
}

// The kinds of file replay reads from a run, with their limits. A real marker is a
// few hundred bytes; a manifest of a long pipeline is tens of megabytes, so its limit
// is generous and it is always streamed.
var (
	Marker   = Kind{"pipeline marker", 64 << 10}
	Manifest = Kind{"manifest", 1 << 30}
	// ManifestHead is a manifest opened to read its first lines only (the first
	// line decides the convention of the lines appended to it): the reader bounds
	// what it reads itself, so a manifest of any size opens, and its own limit is
	// checked by the reader that streams it.
	ManifestHead       = Kind{"manifest", 1<<63 - 1}
	Dispatch           = Kind{"dispatch file", 16 << 20}
	Template           = Kind{"template", 16 << 20}
	Recording          = Kind{"recorded response", 64 << 20}
	ReceiptLedger      = Kind{"receipt ledger", 256 << 20}
	Handoff            = Kind{"handoff manifest", 1 << 20}
	PipelineStatus     = Kind{"pipeline-status.md", 1 << 20}
	BuildMode          = Kind{"build-mode file", 1 << 20}
	CheckpointManifest = Kind{"checkpoint manifest", 64 << 20}
	StatCache          = Kind{"checkpoint stat cache", 1 << 30}
	GitConfig          = Kind{"git config", 1 << 20}
	Lineage            = Kind{"lineage record", 1 << 20}
	Skill              = Kind{"SKILL.md", 4 << 20}
	IgnoreFile         = Kind{"ignore file", 16 << 20}
	SkillStamp         = Kind{"skill install stamp", 4 << 10}
	// DiffLog is replay-diff.jsonl, one line per A/B comparison of the run.
	DiffLog = Kind{"replay-diff log", 256 << 20}
	// AgentLog is an agent's stderr log, of which replay reads the last lines
	// only (ReadAt): it may have any size.
	AgentLog = Kind{"agent log", 1<<62 - 1}
	// AgentProgram is the program an --agent command runs, hashed to tell
	// recordings of another version apart; a larger one is not fingerprinted.
	AgentProgram = Kind{"agent program", 64 << 20}
	// WorktreeFile is a file of a working tree replay compares with a commit,
	// streamed into a hash: a file of any size is read in bounded memory.
	WorktreeFile = Kind{"working-tree file", 1<<62 - 1}
	// PlanDocument is a plan document of the project, of which replay reads the
	// head for task descriptions.
	PlanDocument = Kind{"plan document", 1<<62 - 1}
)

// ErrNotRegular is wrapped by the error for a run file that is a FIFO, a device, a
// socket or a directory: replay reads only regular files from a run.
var ErrNotRegular = platform.ErrNotRegular

// ErrTooLarge is wrapped by the error for a run file larger than its kind's limit.
var ErrTooLarge = errors.New("larger than the limit")

// File is a run file opened for reading through its kind's size limit.
type File struct {
	f    *os.File
	path string
	kind Kind
	info fs.FileInfo
	read int64
}

// Open opens the run file at path for reading: the open never blocks (a FIFO opens
// at once and is then refused), symlinks are followed but what they lead to must be
// a regular file no larger than kind.Max. A missing file is an error wrapping
// fs.ErrNotExist. The caller closes the File.
func Open(path string, kind Kind) (*File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|oNonBlock, 0) //replay:door the door itself: a user-named path, followed, then proved regular and bounded
	if err != nil {
		return nil, err
	}
	return checked(f, path, kind)
}

// OpenNoFollow is Open that never follows a symbolic link in path's last
// component: a link there is an error wrapping ErrLink, whatever it leads to (a
// private file, /dev/zero). For a file whose content replay copies or trusts.
func OpenNoFollow(path string, kind Kind) (*File, error) {
	f, err := platform.OpenNoFollow(path, os.O_RDONLY|oNonBlock, 0)
	if err != nil {
		return nil, linkError(path, kind, err)
	}
	return checked(f, path, kind)
}

// OpenIn opens root/rel for reading without following any symbolic link below
// root (root itself is the caller's and is followed): each directory of rel must be
// a real directory, the file is opened with O_NOFOLLOW through an os.Root (so ".."
// cannot leave root), without blocking, and must be a regular file within kind's
// limit. A link on the way is an error wrapping ErrLink.
func OpenIn(root, rel string, kind Kind) (*File, error) {
	path := filepath.Join(root, rel)
	if !filepath.IsLocal(rel) {
		return nil, fmt.Errorf("%s: %q leaves %s; replay reads only inside it", path, rel, root)
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	sofar := ""
	for _, part := range strings.Split(filepath.ToSlash(filepath.Dir(rel)), "/") {
		if part == "." || part == "" {
			continue
		}
		sofar = filepath.Join(sofar, part)
		st, err := r.Lstat(sofar)
		if err != nil {
			return nil, err
		}
		if st.Mode()&fs.ModeSymlink != 0 {
			return nil, fmt.Errorf("%s %w; replay never reads a %s through a link: remove it and run again", filepath.Join(root, sofar), ErrLink, kind.What)
		}
	}
	f, err := platform.OpenInRootNoFollow(r, rel, os.O_RDONLY|oNonBlock, 0)
	if err != nil {
		return nil, linkError(path, kind, err)
	}
	return checked(f, path, kind)
}

// ReadFileNoFollow reads the whole file at path through OpenNoFollow's rules and
// kind's limit.
func ReadFileNoFollow(path string, kind Kind) ([]byte, error) {
	r, err := OpenNoFollow(path, kind)
	if err != nil {
		return nil, err
	}
	return readAll(r)
}

// ReadFileIn reads the whole of root/rel through OpenIn's rules and kind's limit.
func ReadFileIn(root, rel string, kind Kind) ([]byte, error) {
	r, err := OpenIn(root, rel, kind)
	if err != nil {
		return nil, err
	}
	return readAll(r)
}

// ErrLink is wrapped by the error of a no-follow open that met a symbolic link.
var ErrLink = platform.ErrLink

// linkError says what to do about a link met by a no-follow open.
func linkError(path string, kind Kind, err error) error {
	if errors.Is(err, platform.ErrLink) {
		return fmt.Errorf("%s %w; replay never reads a %s through a link (it could lead to any file): remove it and run again", path, ErrLink, kind.What)
	}
	return err
}

// checked keeps f, opened at path, when it is a regular file within kind's limit.
func checked(f *os.File, path string, kind Kind) (*File, error) {
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: cannot stat the %s: %w", path, kind.What, err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: the %s is %s, %w; replay reads only regular files from a run: replace or remove it", path, kind.What, platform.DescribeMode(st.Mode()), ErrNotRegular)
	}
	if st.Size() > kind.Max {
		f.Close()
		return nil, tooLarge(path, kind)
	}
	return &File{f: f, path: path, kind: kind, info: st}, nil
}

// CheckSize returns the ErrTooLarge error for a file of size bytes at path when
// size is over kind's limit, nil otherwise: for a file opened by a door that
// writes too (a locked manifest), checked before anything of that size is read.
func CheckSize(path string, kind Kind, size int64) error {
	if size > kind.Max {
		return tooLarge(path, kind)
	}
	return nil
}

func tooLarge(path string, kind Kind) error {
	return fmt.Errorf("%s: the %s is %w of %s for a %s; is this the right file?", path, kind.What, ErrTooLarge, Size(kind.Max), kind.What)
}

// Size renders a byte count the way limits are given: "64 KiB", "1 GiB".
func Size(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Read reads from the file; past the kind's limit (the file grew since it was
// opened) it fails with an error wrapping ErrTooLarge.
func (r *File) Read(p []byte) (int, error) {
	if r.read >= r.kind.Max {
		var one [1]byte
		if n, _ := r.f.Read(one[:]); n == 0 {
			return 0, io.EOF
		}
		return 0, tooLarge(r.path, r.kind)
	}
	if rest := r.kind.Max - r.read; int64(len(p)) > rest {
		p = p[:rest]
	}
	n, err := r.f.Read(p)
	r.read += int64(n)
	return n, err
}

// ReadAt reads len(p) bytes at off, within the size the file had when opened.
func (r *File) ReadAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) > r.kind.Max {
		return 0, tooLarge(r.path, r.kind)
	}
	return r.f.ReadAt(p, off)
}

// Stat returns the file's information, taken when it was opened.
func (r *File) Stat() fs.FileInfo { return r.info }

// Name returns the path the file was opened by.
func (r *File) Name() string { return r.path }

// Close closes the file.
func (r *File) Close() error { return r.f.Close() }

// ReadFile reads the whole run file at path through kind's limit. A missing file is
// an error wrapping fs.ErrNotExist.
func ReadFile(path string, kind Kind) ([]byte, error) {
	r, err := Open(path, kind)
	if err != nil {
		return nil, err
	}
	return readAll(r)
}

// readAll reads the whole of r, an opened run file, and closes it.
func readAll(r *File) ([]byte, error) {
	defer r.Close()
	path, kind := r.path, r.kind
	var buf bytes.Buffer
	// ReadFrom wants bytes.MinRead of room before every read: with less, the read
	// that finds the end would first double the buffer (a copy of the whole file).
	buf.Grow(int(r.info.Size()) + bytes.MinRead)
	if _, err := buf.ReadFrom(r); err != nil {
		if errors.Is(err, ErrTooLarge) {
			return nil, err
		}
		return nil, fmt.Errorf("%s: cannot read the %s: %w", path, kind.What, err)
	}
	return buf.Bytes(), nil
}

// ReadHead reads at most the first n bytes of the run file at path, whatever
// its size: a file of any length opens, and no more than n bytes are read.
func ReadHead(path string, kind Kind, n int) ([]byte, error) {
	r, err := Open(path, Kind{What: kind.What, Max: 1<<62 - 1})
	if err != nil {
		return nil, err
	}
	return readHead(r, n)
}

// ReadHeadNoFollow is ReadHead under OpenNoFollow's rules: a symbolic link in
// path's last component is refused (ErrLink), whatever it leads to.
func ReadHeadNoFollow(path string, kind Kind, n int) ([]byte, error) {
	r, err := OpenNoFollow(path, Kind{What: kind.What, Max: 1<<62 - 1})
	if err != nil {
		return nil, err
	}
	return readHead(r, n)
}

// readHead reads at most the first n bytes of r, an opened run file, and closes it.
func readHead(r *File, n int) ([]byte, error) {
	defer r.Close()
	path, kind := r.path, r.kind
	// A file smaller than n is read whole in one call, without a second read that
	// only finds the end; a size of 0 may be a file that does not report its size.
	size := r.info.Size()
	if size <= 0 || size > int64(n) {
		size = int64(n)
	}
	buf := make([]byte, size)
	got, err := io.ReadFull(r, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: cannot read the %s: %w", path, kind.What, err)
	}
	return buf[:got], nil
}
