package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// repoRoot is the repository's root, seen from this package.
const repoRoot = "../../../.."

// readmeLimit is the most the README may weigh: it is a front door, the reference
// lives in docs/.
const readmeLimit = 16 * 1024

var (
	// inlineLink is a markdown link or image, [text](target "title").
	inlineLink = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	// refLink is a reference definition, [label]: target.
	refLink = regexp.MustCompile(`(?m)^\s*\[[^\]]+\]:\s+(\S+)`)
	// codeSpan is inline code, whose brackets are not links.
	codeSpan = regexp.MustCompile("`+[^`\n]*`+")
	// heading is an ATX heading line.
	heading = regexp.MustCompile(`(?m)^#{1,6}\s+(.+?)\s*#*\s*$`)
)

// TestRelativeLinksResolve checks every relative link of README.md, bench/NOTES.md
// and the markdown under docs/: the file it names exists, and a #fragment names a heading
// of that file (as GitHub makes anchors of headings).
func TestRelativeLinksResolve(t *testing.T) {
	files := markdownFiles(t)
	require.Contains(t, files, filepath.Join(repoRoot, "README.md"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		rel, _ := filepath.Rel(repoRoot, file)
		for _, target := range links(string(data)) {
			if isExternal(target) {
				continue
			}
			path, fragment, _ := strings.Cut(target, "#")
			dest := file
			if path != "" {
				dest = filepath.Join(filepath.Dir(file), filepath.FromSlash(path))
				if _, err := os.Stat(dest); err != nil {
					assert.Failf(t, "broken link", "%s links to %s, which does not exist", rel, target)
					continue
				}
			}
			if fragment == "" || !strings.HasSuffix(dest, ".md") {
				continue
			}
			page, err := os.ReadFile(dest)
			require.NoError(t, err)
			assert.Contains(t, anchors(string(page)), fragment, "%s links to %s: no such heading", rel, target)
		}
	}
}

// TestReadmeIsAFrontDoor keeps the README short and its first commands the two
// that work on a fresh machine.
func TestReadmeIsAFrontDoor(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	require.NoError(t, err)
	assert.LessOrEqual(t, len(data), readmeLimit, "README.md is %d bytes; move detail into docs/", len(data))
	block := regexp.MustCompile("(?s)```sh\n(.*?)```").FindSubmatch(data)
	require.NotNil(t, block, "the README starts with a sh block")
	var commands []string
	for _, line := range strings.Split(strings.TrimSpace(string(block[1])), "\n") {
		cmd, _, _ := strings.Cut(line, "#")
		commands = append(commands, strings.TrimSpace(cmd))
	}
	assert.Equal(t, []string{"go run ./cmd/replay demo", "go test ./..."}, commands)
}

func TestLinksAndAnchors(t *testing.T) {
	doc := "# Title\n\nSee [a](a.md), [b](b.md#x \"t\"), ![i](img.png), `[not](code.md)`, [w](https://x.y/z).\n\n" +
		"```\n[fenced](fenced.md)\n```\n\n[ref]: ref.md\n\n## Go-git and replay's own `git` plumbing!\n## Dup\n## Dup\n"
	assert.Equal(t, []string{"a.md", "b.md#x", "img.png", "https://x.y/z", "ref.md"}, links(doc))
	assert.Equal(t, []string{"title", "go-git-and-replays-own-git-plumbing", "dup", "dup-1"}, anchors(doc))
	assert.True(t, isExternal("mailto:a@b"))
	assert.False(t, isExternal("docs/x.md"))
}

// markdownFiles is README.md, bench/NOTES.md and every markdown file under docs/.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	files := []string{filepath.Join(repoRoot, "README.md"), filepath.Join(repoRoot, "bench", "NOTES.md")}
	err := filepath.WalkDir(filepath.Join(repoRoot, "docs"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			files = append(files, path)
		}
		return nil
	})
	require.NoError(t, err)
	return files
}

// links returns the link targets of a markdown text, outside code blocks and
// code spans.
func links(text string) []string {
	var out []string
	for _, line := range proseLines(text) {
		line = codeSpan.ReplaceAllString(line, "")
		for _, m := range inlineLink.FindAllStringSubmatch(line, -1) {
			out = append(out, m[1])
		}
		for _, m := range refLink.FindAllStringSubmatch(line, -1) {
			out = append(out, m[1])
		}
	}
	return out
}

// anchors returns the anchors GitHub gives the headings of a markdown text:
// lower case, punctuation dropped, spaces as hyphens, and -1, -2... on repeats.
func anchors(text string) []string {
	seen := map[string]int{}
	var out []string
	for _, line := range proseLines(text) {
		m := heading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || ('a' <= r && r <= 'z') || ('0' <= r && r <= '9') || r > 127:
				b.WriteRune(r)
			}
		}
		slug := b.String()
		if n := seen[slug]; n > 0 {
			out = append(out, slug+"-"+strconv.Itoa(n))
		} else {
			out = append(out, slug)
		}
		seen[slug]++
	}
	return out
}

// proseLines returns the lines of text outside fenced code blocks.
func proseLines(text string) []string {
	var out []string
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			out = append(out, line)
		}
	}
	return out
}

// isExternal reports whether target leaves the repository (a URL scheme).
func isExternal(target string) bool {
	return regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`).MatchString(target)
}
