package main

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	// onlyFrom is a sentence of docs/cli.md naming the commands that can return a code.
	onlyFrom = regexp.MustCompile(`(?is)code (\d+) only (?:comes )?from (.*?)(?:;|\.\s)`)
	// commandName is a command named in backticks.
	commandName = regexp.MustCompile("`(replay[a-z ]*)`")
	// helpExitCode is a line of an EXIT STATUS section: two spaces and the code.
	helpExitCode = regexp.MustCompile(`(?m)^  (\d+)  `)
)

// TestExitStatusGuideMatchesTheCommands checks the commands docs/cli.md says can
// return codes 3, 4, 5 and 130 against the EXIT STATUS sections of the command tree.
func TestExitStatusGuideMatchesTheCommands(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(docsDir, "cli.md"))
	require.NoError(t, err)
	text := strings.Join(strings.Fields(string(data)), " ")
	documented := map[string][]string{}
	for _, m := range onlyFrom.FindAllStringSubmatch(text, -1) {
		for _, c := range commandName.FindAllStringSubmatch(m[2], -1) {
			documented[m[1]] = append(documented[m[1]], c[1])
		}
	}
	actual := map[string][]string{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.IsAvailableCommand() || !c.HasParent() {
			for _, m := range helpExitCode.FindAllStringSubmatch(c.Long, -1) {
				actual[m[1]] = append(actual[m[1]], c.CommandPath())
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRoot())
	for _, code := range []string{"3", "4", "5", "130"} {
		require.NotEmpty(t, actual[code], "some command returns %s", code)
		sort.Strings(documented[code])
		sort.Strings(actual[code])
		assert.Equal(t, actual[code], documented[code], "docs/cli.md: the commands that can return %s", code)
	}
}
