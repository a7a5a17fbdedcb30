package cli

import (
	"fmt"
	"strings"

	"github.com/replaytool/replay/internal/exitcode"
)

// commandCodes lists, per command path below the root ("" is the root itself), the
// exit codes that command can return; its help's EXIT STATUS shows exactly these.
// 3 belongs only to commands behind a safety guard or the project lock, 4 only to
// commands that read a run's manifest, 130 only to commands that prompt or
// re-dispatch.
var commandCodes = map[string][]int{
	"":                      {0, 1, 2, 3, 4, 130},
	"plan":                  {0, 1, 2, 4},
	"status":                {0, 1, 2},
	"state":                 {0, 1, 2, 4},
	"fork":                  {0, 1, 2, 3, 4},
	"lineage":               {0, 1, 2, 4},
	"diff":                  {0, 1, 2, 4},
	"demo":                  {0, 1, 2},
	"gate":                  {0, 1, 2, 4},
	"corpus":                {0, 1, 2, 3, 130},
	"corpus report":         {0, 1, 2, 3},
	"report":                {0, 1, 2, 4},
	"verify":                {0, 1, 2, 4, 5},
	"version":               {0, 2},
	"mcp":                   {0, 1, 2},
	"manifest":              {0, 2},
	"manifest seq":          {0, 1, 2},
	"manifest before":       {0, 1, 2},
	"manifest after":        {0, 1, 2},
	"manifest cleanup":      {0, 1, 2},
	"manifest repair":       {0, 1, 2},
	"skill":                 {0, 2},
	"skill install":         {0, 1, 2, 3},
	"skill show":            {0, 2},
	"checkpoint":            {0, 2},
	"checkpoint create":     {0, 1, 2, 3},
	"checkpoint list":       {0, 1, 2},
	"checkpoint show":       {0, 1, 2},
	"checkpoint restore":    {0, 1, 2, 3, 130},
	"completion":            {0, 2},
	"completion bash":       {0, 1, 2},
	"completion zsh":        {0, 1, 2},
	"completion fish":       {0, 1, 2},
	"completion powershell": {0, 1, 2},
	"push":                  {0, 1, 2, 3, 4, 130},
	"pull":                  {0, 1, 2, 130},
}

// codeMeaning is the EXIT STATUS line of each code; 3 and 4 have a wording per
// command where the general one would promise what cannot happen.
var codeMeaning = map[int]string{
	exitcode.OK:          "done",
	exitcode.Failure:     "failure",
	exitcode.Usage:       "usage error: unknown command, bad flag or bad value",
	exitcode.Refused:     "refused by a safety guard",
	exitcode.NoResume:    "no manifest to read (not found, or empty or entirely corrupt)",
	exitcode.Unfaithful:  "--strict: a recording is stale, absent or corrupt",
	exitcode.Interrupted: "interrupted: Ctrl-C at a prompt (nothing changed), or SIGINT during\n     a re-dispatch (resumable: run replay again)",
}

// codeMeaningFor overrides codeMeaning for one command.
var codeMeaningFor = map[string]map[int]string{
	"": {
		exitcode.Refused:  "refused by a safety guard (branch mismatch, confirmation declined,\n     restore needed but no TTY and no --yes, another replay is running, a replay\n     would run an external role live without --allow-external)",
		exitcode.NoResume: "nothing to resume (manifest not found, or empty or entirely corrupt)",
	},
	"plan":               {exitcode.NoResume: "nothing to resume (manifest not found, or empty or entirely corrupt)"},
	"fork":               {exitcode.Refused: "refused: the continuation would run an external role live without --allow-external"},
	"corpus":             {exitcode.Refused: "refused: --out holds the log of a corpus run with other arguments, or a replay\n     would run an external role live without --allow-external"},
	"corpus report":      {exitcode.Refused: "refused: the shards in the store are of runs with other arguments or shard counts"},
	"gate":               {exitcode.Failure: "the gate failed (a --fail-on decision or a regression over --max-regression), or another failure"},
	"checkpoint create":  {exitcode.Refused: "refused: another replay is running on the project"},
	"push":               {exitcode.Interrupted: "interrupted (SIGINT or SIGTERM): the run's index was not written; push again"},
	"pull":               {exitcode.Interrupted: "interrupted (SIGINT or SIGTERM): nothing was written; pull again"},
	"checkpoint restore": {exitcode.Refused: "refused by a safety guard (branch mismatch, unmerged index, confirmation\n     declined, no TTY and no --yes, another replay is running)"},
}

// exitStatusFor is the EXIT STATUS section of the help of the command at path
// (below the root, "" for the root); it panics on a path missing from commandCodes,
// which the help test catches.
func exitStatusFor(path string) string {
	codes, ok := commandCodes[path]
	if !ok {
		panic(fmt.Sprintf("exitStatusFor: no exit codes listed for %q", path))
	}
	var b strings.Builder
	b.WriteString("\nEXIT STATUS")
	for _, c := range codes {
		m := codeMeaning[c]
		if o, ok := codeMeaningFor[path][c]; ok {
			m = o
		}
		fmt.Fprintf(&b, "\n  %d  %s", c, m)
	}
	return b.String()
}
