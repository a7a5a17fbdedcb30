// Command doorcheck runs the doorcheck analyzer: `go run
// ./internal/analysis/doorcheck/cmd/doorcheck ./...` fails when a product
// package calls a file system function outside replay's doors.
package main

import (
	"golang.org/x/tools/go/analysis/singlechecker"

	"github.com/replaytool/replay/internal/analysis/doorcheck"
)

func main() { singlechecker.Main(doorcheck.Analyzer) }
