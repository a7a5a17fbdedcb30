package checkpoint

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// namePattern is a gitignore pattern without a slash inside (such as *.log or
// node_modules/), parsed as go-git's gitignore.ParsePattern parses it, so that the
// names of one directory can be matched against it without go-git's Match, which
// runs filepath.Match on every component of every path (the parents' included,
// again for each name).
type namePattern struct {
	kind      nameKind
	text      string   // the pattern, without "!", trailing spaces and the final "/"
	domain    []string // the components of the directory it applies below
	dirOnly   bool
	inclusion bool
}

type nameKind uint8

const (
	nameGlob     nameKind = iota // has a slash: matched by go-git's Match
	nameLiteral                  // no wildcard: the name itself
	nameSuffix                   // "*" and no other wildcard: a suffix
	nameWildcard                 // any other: filepath.Match on the name
)

// parseNamePattern parses line as gitignore.ParsePattern does, for a .gitignore
// in the directory domain (components from the root).
func parseNamePattern(line string, domain []string) namePattern {
	p := namePattern{domain: slices.Clone(domain)}
	if strings.HasPrefix(line, "!") {
		p.inclusion = true
		line = line[1:]
	}
	if !strings.HasSuffix(line, "\\ ") {
		line = strings.TrimRight(line, " ")
	}
	if strings.HasSuffix(line, "/") {
		p.dirOnly = true
		line = line[:len(line)-1]
	}
	p.text = line
	const wild = "*?[\\"
	switch {
	case strings.Contains(line, "/"):
		p.kind = nameGlob
	case !strings.ContainsAny(line, wild):
		p.kind = nameLiteral
	case line[0] == '*' && !strings.ContainsAny(line[1:], wild):
		p.kind = nameSuffix
	default:
		p.kind = nameWildcard
	}
	return p
}

// dirMatcher is a directory's ignore rules made ready for the names in it.
type dirMatcher struct {
	rules *ignoreRules
	path  []string // the directory's components and a last one for the name
	// applies is, for each pattern without a slash, whether it applies in the
	// directory (its own directory or one below); parent, whether it matches one of
	// the directory's own components below the pattern's directory (then it
	// matches every name in it, as go-git's simpleNameMatch does).
	applies, parent []bool
}

// forDir prepares r for the names of the directory whose components are dir.
func (r *ignoreRules) forDir(dir []string) *dirMatcher {
	m := &dirMatcher{rules: r, path: append(dir[:len(dir):len(dir)], ""),
		applies: make([]bool, len(r.patterns)), parent: make([]bool, len(r.patterns))}
	for i, p := range r.patterns {
		d := r.names[i].domain
		m.applies[i] = len(dir) >= len(d) && slices.Equal(dir[:len(d)], d)
		if r.names[i].kind != nameGlob && len(dir) > len(d) {
			m.parent[i] = p.Match(dir, true) != gitignore.NoMatch
		}
	}
	return m
}

// match reports whether the name, in the directory, is ignored: what r.match of its
// full path reports.
func (m *dirMatcher) match(name string, isDir bool) bool {
	for i := len(m.rules.patterns) - 1; i >= 0; i-- {
		n := &m.rules.names[i]
		if n.kind == nameGlob {
			m.path[len(m.path)-1] = name
			if res := m.rules.patterns[i].Match(m.path, isDir); res != gitignore.NoMatch {
				return res == gitignore.Exclude
			}
			continue
		}
		if !m.applies[i] || !(m.parent[i] || n.matchName(name, isDir)) {
			continue
		}
		return !n.inclusion
	}
	return false
}

// matchName reports whether the last component of a path matches the pattern.
func (n *namePattern) matchName(name string, isDir bool) bool {
	var hit bool
	switch n.kind {
	case nameLiteral:
		hit = name == n.text
	case nameSuffix:
		hit = strings.HasSuffix(name, n.text[1:])
	default:
		var err error
		hit, err = filepath.Match(n.text, name)
		hit = hit && err == nil
	}
	return hit && !(n.dirOnly && !isDir)
}
