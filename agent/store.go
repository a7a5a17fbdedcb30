package agent

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/replaytool/replay/internal/runfile"
	"github.com/replaytool/replay/internal/safewrite"
)

// ResponsesDir is the subdirectory of a dispatch directory that holds recorded
// responses, one <key>.json file per key.
const ResponsesDir = "responses"

// Store holds recorded responses: <dispatchDir>/responses/<key>.json. Saves go to
// the first directory; lookups also search the read-only fallbacks added by Also.
type Store struct {
	base string // the directory saves are confined to (the caller's, followed)
	rel  string // the store's own directory below base ("." for base itself)
	dirs []string
}

// OpenStore returns the store of a dispatch directory, which saves are confined
// to: it must exist when the first Save comes (nothing is created before).
func OpenStore(dispatchDir string) *Store { return OpenStoreIn(dispatchDir, ".") }

// OpenStoreIn returns the store kept in base/rel, a directory replay creates
// inside a run (an A/B session's responses folder in the scratch dir, a fork's
// directory): base is the caller's directory, followed; rel and the directories on
// the way to it are created by Save through a no-follow root (internal/safewrite),
// so a symbolic link or a file planted in their place is refused with one line and
// nothing is written through it.
func OpenStoreIn(base, rel string) *Store {
	rel = filepath.Clean(rel)
	return &Store{base: base, rel: rel, dirs: []string{filepath.Join(base, rel, ResponsesDir)}}
}

// Own returns a store saving where s does with none of the fallbacks Also added
// to s: lookups find only its own recordings.
func (s *Store) Own() *Store {
	return &Store{base: s.base, rel: s.rel, dirs: s.dirs[:1:1]}
}

// Also adds the recordings of more dispatch directories (e.g. the durable copy in
// the scratch dir) as read-only fallbacks searched after the store's own, and
// returns s.
func (s *Store) Also(dispatchDirs ...string) *Store {
	for _, d := range dispatchDirs {
		s.dirs = append(s.dirs, filepath.Join(d, ResponsesDir))
	}
	return s
}

// Dir returns the directory the store saves recordings in.
func (s *Store) Dir() string { return s.dirs[0] }

// Path returns the file that holds (or would hold) key's recording.
func (s *Store) Path(key string) string { return filepath.Join(s.dirs[0], key+".json") }

func validKey(key string) bool {
	if len(key) != 64 {
		return false
	}
	for _, c := range []byte(key) {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// Lookup returns the response recorded under key, with Reused and Key set. A key
// with no recording is (nil, false, nil); a recording that cannot be read is an
// error naming its file.
func (s *Store) Lookup(key string) (*Response, bool, error) {
	if !validKey(key) {
		return nil, false, fmt.Errorf("recorded responses: %q is not a recording key (64 hex digits)", key)
	}
	for _, dir := range s.dirs {
		path := filepath.Join(dir, key+".json")
		data, err := runfile.ReadFile(path, runfile.Recording)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, false, fmt.Errorf("%s: cannot read the recorded response: %w", path, err)
		}
		r, err := decodeRecording(data, key)
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w; delete the file to record this dispatch again", path, err)
		}
		return r, true, nil
	}
	return nil, false, nil
}

// Save records r under key, atomically (a temp file renamed into place), so a crash
// leaves either no recording or a whole one.
func (s *Store) Save(key string, req Request, r Response) error {
	if !validKey(key) {
		return fmt.Errorf("recorded responses: %q is not a recording key (64 hex digits)", key)
	}
	data, err := encodeRecording(key, req, r)
	if err != nil {
		return fmt.Errorf("dispatch %s: cannot encode the response: %w", req.ID(), err)
	}
	// Within base as a root: the store's directory, its responses/ folder and the
	// recording are each refused when a run planted a link or a file in their place,
	// and never written through.
	return safewrite.WriteAtomicIn(s.base, filepath.Join(s.rel, ResponsesDir, key+".json"), data)
}
