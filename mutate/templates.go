package mutate

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// FindTemplate returns the file of template (a "# Dispatch:" name such as
// "build-reviewer") in dir: <dir>/<template>-prompt.md, else <dir>/<template>.md. A
// name that already ends in ".md" is looked up as is. A name that is not a plain file
// name is refused; a missing template is an error wrapping fs.ErrNotExist.
func FindTemplate(dir, template string) (string, error) {
	if err := checkName(template); err != nil {
		return "", err
	}
	candidates := []string{template + "-prompt.md", template + ".md"}
	if strings.HasSuffix(template, ".md") {
		candidates = []string{template}
	}
	for _, name := range candidates {
		p := filepath.Join(dir, name)
		st, err := os.Stat(p)
		if err == nil && st.Mode().IsRegular() {
			return p, nil
		}
	}
	return "", fmt.Errorf("template %q: no %s in %s: %w", template, strings.Join(candidates, " or "), dir, fs.ErrNotExist)
}

// checkName refuses a template name that is empty or not a single path component.
func checkName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) ||
		strings.ContainsFunc(name, isControl) || !filepath.IsLocal(name) {
		return fmt.Errorf("template name %q is not a plain file name; fix the dispatch header or --mutate flag", name)
	}
	return nil
}

// Stale returns one warning per template (each named once, in the order given)
// whose file in dir was modified after since, the start of the original run.
// Templates that cannot be found are left to the caller.
func Stale(dir string, templates []string, since time.Time) []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range templates {
		p, err := FindTemplate(dir, t)
		if err != nil || seen[p] {
			continue
		}
		seen[p] = true
		st, err := os.Stat(p)
		if err != nil || !st.ModTime().After(since) {
			continue
		}
		out = append(out, fmt.Sprintf("Warning: Template %s was modified after the original pipeline run. A/B comparison may be confounded by template changes unrelated to the mutation.", filepath.Base(p)))
	}
	return out
}
