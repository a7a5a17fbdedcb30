package mutate

import (
	"errors"
	"io/fs"
	"sort"
	"strings"

	"github.com/replaytool/replay/internal/textdist"
)

// Unknown checks that every mutation names a template the run can use: one that a
// dispatch of the run (runTemplates, the "# Dispatch:" names) uses, or, when
// templatesDir is given, one that has a file there. A misspelled ORIG is a usage
// error listing the run's template names, closest first.
func Unknown(ms []Mutation, runTemplates []string, templatesDir string) error {
	names := distinctStems(runTemplates)
	for _, m := range ms {
		if usedBy(m, runTemplates) {
			continue
		}
		if templatesDir != "" {
			if _, err := FindTemplate(templatesDir, stem(m.Orig)); err == nil {
				continue
			} else if !errors.Is(err, fs.ErrNotExist) {
				return usage("--mutate %s: %v", m.Orig, err)
			}
		}
		where := "no dispatch of the run uses it"
		if templatesDir != "" {
			where += " and " + templatesDir + " has no such template"
		}
		if len(names) == 0 {
			return usage("--mutate %s=%s: template %q is unknown: %s", m.Orig, m.Repl, m.Orig, where)
		}
		return usage("--mutate %s=%s: template %q is unknown: %s; the run uses %s",
			m.Orig, m.Repl, m.Orig, where, strings.Join(Closest(stem(m.Orig), names), ", "))
	}
	return nil
}

// usedBy reports whether a dispatch of one of templates is mutated by m.
func usedBy(m Mutation, templates []string) bool {
	for _, t := range templates {
		if m.Matches(t) {
			return true
		}
	}
	return false
}

// distinctStems returns the template names of templates, each once.
func distinctStems(templates []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range templates {
		s := stem(strings.TrimSpace(t))
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// Closest returns names sorted by edit distance to word, closest first (ties by
// name), so a misspelling's intended name leads the list.
func Closest(word string, names []string) []string {
	out := append([]string(nil), names...)
	d := make(map[string]int, len(out))
	for _, n := range out {
		d[n] = textdist.Distance(strings.ToLower(word), strings.ToLower(n))
	}
	sort.SliceStable(out, func(i, j int) bool {
		if d[out[i]] != d[out[j]] {
			return d[out[i]] < d[out[j]]
		}
		return out[i] < out[j]
	})
	return out
}
