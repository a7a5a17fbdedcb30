// Command simrun writes the crashed run of one pipesim seed to a directory and
// prints its ground truth as JSON, to debug a seed the property tests report:
//
//	go run ./internal/testkit/pipesim/cmd/simrun -seed N -out DIR
//
// The run's project is DIR/project; run replay there with HOME=DIR/home and
// TMPDIR=DIR/tmp, e.g. `replay plan --json --now <truth's now>`.
//
// With -corpus CASEDIR it also writes CASEDIR/expect.json, a simulator corpus
// case (testdata/simcorpus/<class>/, run by e2e/simcorpus_test.go, which
// generates the seed's run at test time):
//
//	go run ./internal/testkit/pipesim/cmd/simrun -seed N -out DIR -corpus testdata/simcorpus/item-twice \
//	    -class work-items/item-twice -scenario "what goes wrong and why" [-execute]
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/replaytool/replay/internal/testkit/pipesim"
)

func main() {
	seed := flag.Int64("seed", 1, "the seed of the run to write")
	out := flag.String("out", "", "the directory to write the run into (must be empty or absent)")
	corpus := flag.String("corpus", "", "also write a simulator corpus case's expect.json into this directory")
	class := flag.String("class", "", "with -corpus: the property/class the case keeps")
	scenario := flag.String("scenario", "", "with -corpus: what goes wrong, in a sentence")
	execute := flag.Bool("execute", false, "with -corpus: the case also executes the resume")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "simrun: -out DIR is required")
		os.Exit(2)
	}
	if *corpus != "" && (*class == "" || *scenario == "") {
		fmt.Fprintln(os.Stderr, "simrun: -corpus needs -class and -scenario")
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
	if *corpus != "" {
		if err := pipesim.WriteCorpusCase(*corpus, t.CorpusCase(*class, *scenario, *execute)); err != nil {
			fmt.Fprintf(os.Stderr, "simrun: %v\n", err)
			os.Exit(1)
		}
	}
	fmt.Fprintf(os.Stderr, "cd %s && HOME=%s TMPDIR=%s replay plan --json --now %s\n", t.Project, t.Home, t.Tmp, t.Now.Format("2006-01-02T15:04:05Z"))
}
