// Command replay resumes crashed multi-agent pipelines and replays them with template mutations.
package main

import (
	"os"

	"github.com/replaytool/replay/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:]))
}
