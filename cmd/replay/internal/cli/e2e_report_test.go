package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/fixture"
)

// checkHTMLReport checks the HTML report a replicated replay (r, 3 replicas per
// arm, the stricter reviewer) wrote to out, and that the saved result renders to
// the same page again. TestGateTurnsAResultIntoAnExitCode calls it on its run, so
// the package makes one replicated replay for both.
func checkHTMLReport(t *testing.T, s *Sandbox, p *fixture.Pipeline, r Result, out string) {
	t.Helper()
	assert.Contains(t, r.Stderr, "HTML report written to "+out)
	page, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Contains(t, string(page), "<h2 id=\"decision\">Decision: <span class=\"verdict reject\">REJECT</span>")
	assert.Equal(t, 5, strings.Count(string(page), `<svg class="chart"`), "one chart per metric")
	assert.NotContains(t, string(page), "<script")

	// The saved result renders to the same page again, from the log or a file.
	again := filepath.Join(p.Root, "again.html")
	g := s.Run(t, p.Project, "report", p.Scratch, "--html", again)
	require.Equal(t, 0, g.Code, g.Stderr)
	second, err := os.ReadFile(again)
	require.NoError(t, err)
	assert.Equal(t, string(page), string(second), "the same result gives the same bytes")
	md := s.Run(t, p.Project, "report", p.Scratch)
	require.Equal(t, 0, md.Code, md.Stderr)
	assert.Contains(t, md.Stdout, "## Decision: REJECT")
	js := s.Run(t, p.Project, "report", p.Scratch, "--json")
	require.Equal(t, 0, js.Code, js.Stderr)
	saved := filepath.Join(p.Root, "report.json")
	require.NoError(t, os.WriteFile(saved, []byte(js.Stdout), 0o644))
	g = s.Run(t, p.Project, "report", "--result", saved, "--html", "rel.html")
	require.Equal(t, 0, g.Code, g.Stderr)
	third, err := os.ReadFile(filepath.Join(p.Project, "rel.html"))
	require.NoError(t, err, "a relative --html is relative to the working directory")
	assert.Equal(t, string(page), string(third))
}

func TestHTMLReportRefusesBadTargets(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	victim := filepath.Join(p.Root, "victim.txt")
	require.NoError(t, os.WriteFile(victim, []byte("keep"), 0o644))
	link := filepath.Join(p.Root, "link.html")
	require.NoError(t, os.Symlink(victim, link))
	replicas := replicasArgs(t, p, "--replicas", "1", "--html", link)
	before := digest(t, p.Root)
	for name, args := range map[string][]string{
		"html is a directory":     {"report", "--result", p.ManifestPath, "--html", p.Root},
		"html is a link":          {"report", "--result", p.ManifestPath, "--html", link},
		"empty html":              {"report", "--html", ""},
		"no result":               {"report", "--result", filepath.Join(p.Root, "none.json"), "--html", "x.html"},
		"not a result":            {"report", "--result", p.ManifestPath, "--html", "x.html"},
		"html without replicas":   {p.Scratch, "--html", "x.html"},
		"replicas into a symlink": replicas,
	} {
		r := s.Run(t, p.Project, args...)
		assert.Equal(t, 2, r.Code, "%s: %s", name, r.Stderr)
		assert.NotEmpty(t, r.Stderr, name)
		assert.Equal(t, before, digest(t, p.Root), "%s: nothing is written", name)
	}
	assert.Equal(t, before, digest(t, p.Root), "nothing is written, the link's target is untouched")
	data, err := os.ReadFile(victim)
	require.NoError(t, err)
	assert.Equal(t, "keep", string(data))
}
