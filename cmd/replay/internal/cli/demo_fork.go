package cli

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/replaytool/replay/fork"
	"github.com/replaytool/replay/internal/fixture"
	"github.com/replaytool/replay/internal/safewrite"
)

// demoForkSeq is the seq the demo forks at: the first reviewer of wave 1.
const demoForkSeq = 15

// demoTimeTravelSteps is how many steps demoTimeTravel shows.
const demoTimeTravelSteps = 4

// demoTimeTravel is the second part of the tour: the run as it was at a seq, a fork
// whose reviewer fails task 1, the tree of runs and the fork's diff against its
// parent. done is the number of steps already shown.
func demoTimeTravel(f *runEnv, p *fixture.Pipeline, self string, done int) error {
	now := p.Now.UTC().Format(time.RFC3339)
	verdict := filepath.Join(p.Root, "verdict-fail.txt")
	text := "Review of task 1\nVERDICT: FAIL\nSUMMARY: Task 1 rejected: the login form accepts an empty password\n"
	if err := safewrite.WriteFile(verdict, []byte(text), 0o644); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	seq := fmt.Sprint(demoForkSeq)
	steps := []demoStep{
		{title: "Time travel", say: "state shows the run as it was when seq " + seq + " was sent: the phase map with what was still running, the checkpoint in effect, the files changed since it and the Compression State Block then. Read-only.", args: []string{"state", p.Scratch, "--at", seq}},
		{title: "Fork with a substituted verdict", say: "What if the reviewer had failed task 1? fork makes a child run that shares seqs below " + seq + " with the original by reference, takes verdict-fail.txt as the reviewer's answer (recorded as the child's response) and starts an isolated worktree from the checkpoint in effect. The original run's files are not written.", args: []string{"fork", p.Scratch, "--at", seq, "--substitute", seq + "=" + verdict, "--reason", "the reviewer fails task 1"}},
		{title: "The tree of runs", say: "lineage shows the original run, the resume and the A/B session recorded in its manifest, and the fork with its fork point.", args: []string{"lineage", p.Scratch}},
	}
	for i, s := range steps {
		if err := demoStepRun(f, p, self, done+i+1, s, now); err != nil {
			return err
		}
	}
	recs, _ := fork.ListRecords(p.Scratch)
	if len(recs) != 1 {
		return fmt.Errorf("demo: expected the fork just made under %s, found %d", filepath.Join(p.Scratch, fork.ForksDir), len(recs))
	}
	last := demoStep{title: "The fork against its parent", say: "diff aligns the two runs by role, phase and task: the first divergence is the substituted verdict, and the dispatches after it are what follows from it.", args: []string{"diff", p.Scratch, recs[0].Session}}
	return demoStepRun(f, p, self, done+len(steps)+1, last, now)
}

// demoStepRun prints and runs one step of the tour, numbered n.
func demoStepRun(f *runEnv, p *fixture.Pipeline, self string, n int, s demoStep, now string) error {
	args := append(append([]string{}, s.args...), "--now", now)
	if args[0] == "resume" {
		args = args[1:]
	}
	demoHeading(f, n, s.title)
	out := f.IO.Out
	if f.Global.Verbose {
		fmt.Fprintf(out, "%s\n\n$ %s %s\n\n", s.say, self, strings.Join(quoteArgs(args), " "))
		if code := runDemoStep(f, p, args, nil); code != s.wantCode {
			fmt.Fprintf(out, "(exit %d, expected %d)\n", code, s.wantCode)
			return fmt.Errorf("demo: step %d (%s) ended with exit %d, expected %d", n, s.title, code, s.wantCode)
		}
		return nil
	}
	// The short form: what the step shows, the command, and the lines of its
	// output that matter, all within the screen's width.
	// Paths are written under $DEMO and the binary as replay (the header says
	// what both are), so the lines read the same wherever the example lives.
	width := demoWidth(f)
	short := strings.NewReplacer(p.Root, "$DEMO")
	demoWrap(out, s.say, width, "", "")
	words := []string{"replay"}
	for _, a := range quoteArgs(args) {
		words = append(words, short.Replace(a))
	}
	demoWrapCommand(out, words, width)
	fmt.Fprintln(out)
	var captured bytes.Buffer
	code := runDemoStep(f, p, args, &captured)
	writeDemoDigest(out, s.title, []byte(short.Replace(captured.String())), width)
	if code != s.wantCode {
		fmt.Fprintf(out, "(exit %d, expected %d)\n", code, s.wantCode)
		return fmt.Errorf("demo: step %d (%s) ended with exit %d, expected %d", n, s.title, code, s.wantCode)
	}
	return nil
}
