package agent

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
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
	root string // the dispatch directory saves are confined to
	dirs []string
}

// OpenStore returns the store of a dispatch directory. Nothing is created until the
// first Save.
func OpenStore(dispatchDir string) *Store {
	return &Store{root: dispatchDir, dirs: []string{filepath.Join(dispatchDir, ResponsesDir)}}
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
	// Within the dispatch dir as a root: a symlinked responses/ directory or recording
	// planted in the run is refused, never written through.
	if err := os.MkdirAll(s.root, 0o755); err != nil {
		return fmt.Errorf("%s: cannot create the dispatch directory: %w", s.root, err)
	}
	return safewrite.WriteAtomicIn(s.root, filepath.Join(ResponsesDir, key+".json"), data)
}
