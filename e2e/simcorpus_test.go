package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/testkit/pipesim"
	"github.com/replaytool/replay/internal/testkit/simplan"
)

// simcorpusPending lists the simulator corpus cases the current resume code
// fails, with why: they are run, and skipped while they fail. A pending case
// that passes fails the test, so its mark is removed once the fix lands.
var simcorpusPending = map[string]string{}

// TestSimCorpus runs every case of testdata/simcorpus: each names a pipesim seed
// that exposed a class of resume bug. The run is generated from the seed at test
// time (nothing generated is committed), replay's plan (and, for
// one-decision cases, the resume) runs on it through the binary, and the
// decision must hold every property pipesim.Judge checks and match the case's
// expected facts.
func TestSimCorpus(t *testing.T) {
	cases, err := filepath.Glob(filepath.Join("..", "testdata", "simcorpus", "*", "expect.json"))
	require.NoError(t, err)
	require.NotEmpty(t, cases)
	for _, path := range cases {
		name := filepath.Base(filepath.Dir(path))
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			runSimCorpusCase(t, name, path)
		})
	}
}

func runSimCorpusCase(t *testing.T, name, path string) {
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var want pipesim.CorpusCase
	require.NoError(t, json.Unmarshal(data, &want), path)

	s := NewSandbox(t)
	tr, err := pipesim.Generate(want.Seed, filepath.Join(s.Root, "run"))
	require.NoError(t, err)
	if drift := want.Mismatch(tr); len(drift) > 0 {
		t.Fatalf("%s: the generator changed: %s; regenerate the case with go run ./internal/testkit/pipesim/cmd/simrun -seed %d -out DIR -corpus %s -class %s -scenario ...",
			name, strings.Join(drift, "; "), want.Seed, filepath.Dir(path), want.Class)
	}
	s.Home, s.Tmp = tr.Home, tr.Tmp
	d, problems := simCorpusDecision(t, s, tr, want)
	v := pipesim.Judge(tr, d)
	for _, f := range v.Findings {
		problems = append(problems, fmt.Sprintf("%s/%s: %s", f.Property, f.Class, f.Detail))
	}
	if reason, pending := simcorpusPending[name]; pending {
		if len(problems) > 0 {
			t.Skipf("pending (%s):\n- %s", reason, strings.Join(problems, "\n- "))
		}
		t.Errorf("case %s passes now: remove it from simcorpusPending (%s)", name, reason)
		return
	}
	if len(problems) > 0 {
		t.Fatalf("%s (seed %d, %s): %s\n- %s", name, want.Seed, want.Class, want.Scenario, strings.Join(problems, "\n- "))
	}
}

// keptOnUnrestoredTree says d's skip differs from the truth's only by keeping
// more: a decision that restores nothing keeps completed work after its resume
// point that verifies on disk rather than doing it again on the unrestored tree
// (issue 36's end-state rule). Whether what it keeps is really on disk is the
// judge's to say (pipesim.Judge: what a decision that restores nothing skips
// and is not on disk).
func keptOnUnrestoredTree(d pipesim.Decision, truth []int) bool {
	if d.Checkpoint != "" {
		return false
	}
	kept := map[int]bool{}
	for _, s := range d.Skip {
		kept[s] = true
	}
	for _, s := range truth {
		if !kept[s] {
			return false
		}
	}
	return true
}

var simCorpusFailed = regexp.MustCompile(`^seq (\d+) [^:]*: (.+?) failed: `)

// simCorpusDecision runs `replay plan --json` (and the resume when the case
// says so) on the generated run and returns the decision, with the ways the
// plan differs from the case's facts.
func simCorpusDecision(t *testing.T, s *Sandbox, tr *pipesim.Truth, want pipesim.CorpusCase) (pipesim.Decision, []string) {
	var bad []string
	r := s.Run(t, filepath.Join(s.Root, "run", want.Dir), append(append([]string{"plan", "--json"}, want.Args...), "--now", want.Now)...)
	if r.Code != want.Exit {
		return pipesim.Decision{}, []string{fmt.Sprintf("plan exit %d, want %d: %s", r.Code, want.Exit, r.Stderr)}
	}
	var p struct {
		Checkpoint          string `json:"checkpoint"`
		ResumePoint         string `json:"resume_point"`
		NextSeq             int    `json:"next_seq"`
		Skip, Redo          []simplan.Row
		FailedVerifications []string `json:"failed_verifications"`
		Preflight           []string `json:"preflight"`
		Warnings            []string `json:"warnings"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &p), "plan --json: %s", r.Stdout)
	d := pipesim.Decision{Checkpoint: p.Checkpoint, NextSeq: p.NextSeq, Notes: p.Warnings, Skip: simplan.Seqs(p.Skip), Redo: simplan.Seqs(p.Redo)}
	for _, l := range p.FailedVerifications {
		f := pipesim.Failed{Line: l}
		if m := simCorpusFailed.FindStringSubmatch(l); m != nil {
			f.Seq, _ = strconv.Atoi(m[1])
			f.Check = m[2]
		}
		d.Failed = append(d.Failed, f)
	}
	for _, l := range p.Preflight {
		d.Refuses = d.Refuses || strings.HasPrefix(l, "FAIL")
	}
	if want.ResumeCheckpoint != "" && !strings.Contains(p.ResumePoint, want.ResumeCheckpoint+", checkpoint") {
		bad = append(bad, fmt.Sprintf("resume point %q, want checkpoint %s", p.ResumePoint, want.ResumeCheckpoint))
	}
	if want.ResumeCheckpoint == "" && p.Checkpoint != "" {
		bad = append(bad, fmt.Sprintf("restores checkpoint %s, want no restore", p.Checkpoint))
	}
	if fmt.Sprint(d.Skip) != fmt.Sprint(want.Skip) && !(len(d.Skip) == 0 && len(want.Skip) == 0) && !keptOnUnrestoredTree(d, want.Skip) {
		bad = append(bad, fmt.Sprintf("skipped seqs %v, want %v", d.Skip, want.Skip))
	}
	if p.NextSeq != want.NextSeq {
		bad = append(bad, fmt.Sprintf("next seq %d, want %d", p.NextSeq, want.NextSeq))
	}
	if want.Execute {
		d.Ran = true
		d.Executed, d.Unlinked, d.Said = simCorpusResume(t, s, tr, want)
		simplan.CountSkillRuns(&d, p.Redo)
	}
	return d, bad
}

// simCorpusResume executes the resume with an agent that reports success and
// reads the dispatches it appended to the session's manifests.
func simCorpusResume(t *testing.T, s *Sandbox, tr *pipesim.Truth, want pipesim.CorpusCase) (replayed []int, unlinked int, said string) {
	manifests, _ := filepath.Glob(filepath.Join(tr.Tmp, "crucible-dispatch-"+tr.Session, "manifest.jsonl"))
	more, _ := filepath.Glob(filepath.Join(tr.Home, ".claude", "projects", "*", "memory", "crucible-dispatch-"+tr.Session, "manifest.jsonl"))
	manifests = append(manifests, more...)
	before := map[string]int64{}
	for _, m := range manifests {
		if fi, err := os.Stat(m); err == nil {
			before[m] = fi.Size()
		}
	}
	r := s.Run(t, filepath.Join(s.Root, "run", want.Dir), "--yes", "--agent", "cat >/dev/null; echo SUMMARY: done", "--now", want.Now)
	seen := map[[2]int]bool{}
	for _, m := range manifests {
		f, err := os.Open(m)
		if err != nil {
			continue
		}
		if _, err := f.Seek(before[m], 0); err == nil {
			sc := bufio.NewScanner(f)
			sc.Buffer(make([]byte, 64<<10), 1<<20)
			for sc.Scan() {
				var e struct {
					Seq      int    `json:"seq"`
					Status   string `json:"status"`
					ReplayOf *int   `json:"replay_of"`
				}
				if json.Unmarshal(sc.Bytes(), &e) != nil || e.Status != "dispatched" {
					continue
				}
				of := -1
				if e.ReplayOf != nil {
					of = *e.ReplayOf
				}
				if !seen[[2]int{e.Seq, of}] {
					seen[[2]int{e.Seq, of}] = true
					if of < 0 {
						unlinked++
					} else {
						replayed = append(replayed, of)
					}
				}
			}
		}
		f.Close()
	}
	out := strings.TrimSpace(r.Stdout + "\n" + r.Stderr)
	if i := strings.LastIndexByte(out, '\n'); i >= 0 {
		out = out[i+1:]
	}
	return replayed, unlinked, fmt.Sprintf("exit %d: %s", r.Code, out)
}
