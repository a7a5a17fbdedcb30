package checkpoint

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"

	"github.com/replaytool/replay/internal/runfile"
)

// ignoreRules is the stack of gitignore patterns in force in one directory, lowest
// priority first: the shadow's info/exclude, the project's .git/info/exclude, then
// every .gitignore from the root down.
type ignoreRules struct {
	patterns []gitignore.Pattern
	names    []namePattern // beside each pattern, its form for dirMatcher
}

// with returns the rules extended by the patterns of the ignore file at file, whose
// patterns apply below domain; r itself when the file does not exist.
func (r *ignoreRules) with(file string, domain []string) (*ignoreRules, error) {
	// Read as git reads an ignore file inside a work tree: never through a link
	// (git refuses a symlinked .gitignore), never a FIFO a run could plant (it
	// would hang the checkpoint), within a limit.
	data, err := runfile.ReadFileNoFollow(file, runfile.IgnoreFile)
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, runfile.ErrLink) || errors.Is(err, runfile.ErrNotRegular) || (err == nil && len(data) == 0) {
		return r, nil
	}
	if err != nil {
		if st, serr := os.Stat(file); serr == nil && st.IsDir() {
			return r, nil
		}
		return nil, fmt.Errorf("%s: cannot read the ignore file: %w", file, err)
	}
	ps := make([]gitignore.Pattern, len(r.patterns), len(r.patterns)+16)
	copy(ps, r.patterns)
	names := make([]namePattern, len(r.names), len(r.names)+16)
	copy(names, r.names)
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(line, domain))
		names = append(names, parseNamePattern(line, domain))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: cannot read the ignore file: %w", file, err)
	}
	return &ignoreRules{patterns: ps, names: names}, nil
}

// baseRules returns the rules that apply everywhere: the shadow repository's own
// info/exclude and the project's .git/info/exclude.
func (s *Store) baseRules() (*ignoreRules, error) {
	r := &ignoreRules{}
	r, err := r.with(filepath.Join(s.shadowDir, "info", "exclude"), nil)
	if err != nil {
		return nil, err
	}
	return r.with(filepath.Join(s.projectDir, ".git", "info", "exclude"), nil)
}
