// Command replay resumes crashed multi-agent pipelines and replays them with template mutations.
package main

import (
	"os"
	_ "time/tzdata" // checkpoint subjects carry the local wall clock: read TZ on any machine

	"github.com/replaytool/replay/cmd/replay/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:]))
}
