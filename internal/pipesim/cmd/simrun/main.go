// Command simrun writes the crashed run of one pipesim seed to a directory and
// prints its ground truth as JSON, to debug a seed the property tests report:
//
//	go run ./internal/pipesim/cmd/simrun -seed N -out DIR
//
// The run's project is DIR/project; run replay there with HOME=DIR/home and
// TMPDIR=DIR/tmp, e.g. `replay plan --json --now <truth's now>`.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/replaytool/replay/internal/pipesim"
)

func main() {
	seed := flag.Int64("seed", 1, "the seed of the run to write")
	out := flag.String("out", "", "the directory to write the run into (must be empty or absent)")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "simrun: -out DIR is required")
		os.Exit(2)
	}
	if entries, err := os.ReadDir(*out); err == nil && len(entries) > 0 {
		fmt.Fprintf(os.Stderr, "simrun: %s is not empty; give an empty or new directory\n", *out)
		os.Exit(2)
	}
	t, err := pipesim.Generate(*seed, *out)
	if err != nil {
		fmt.Fprintf(os.Stderr, "simrun: seed %d: %v\n", *seed, err)
		os.Exit(1)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(t); err != nil {
		fmt.Fprintf(os.Stderr, "simrun: %v\n", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "cd %s && HOME=%s TMPDIR=%s replay plan --json --now %s\n", t.Project, t.Home, t.Tmp, t.Now.Format("2006-01-02T15:04:05Z"))
}
