package cli_test

// The one place the simulator's property tests touch replay: they drive the
// decision only through the CLI's machine output (`replay plan --json`) and the
// manifest lines a real resume appends, so they do not depend on the internal
// APIs that compute the decision.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/replaytool/replay/internal/testkit/pipesim"
	"github.com/replaytool/replay/internal/testkit/simplan"
)

// simPlan is the part of `replay plan --json` the properties read.
type simPlan struct {
	Checkpoint          string        `json:"checkpoint"`
	ResumePoint         string        `json:"resume_point"`
	NextSeq             int           `json:"next_seq"`
	Skip                []simplan.Row `json:"skip"`
	Redo                []simplan.Row `json:"redo"`
	FailedVerifications []string      `json:"failed_verifications"`
	Preflight           []string      `json:"preflight"`
	Warnings            []string      `json:"warnings"`
}

// refuses says the plan's preflight stops a real run before it writes.
func (p simPlan) refuses() bool {
	for _, l := range p.Preflight {
		if strings.HasPrefix(l, "FAIL") {
			return true
		}
	}
	return false
}

// simFailedLine is replay's line for a failed verification:
// "seq N role: check failed: detail (so the resume cannot start at B)".
var simFailedLine = regexp.MustCompile(`^seq (\d+) [^:]*: (.+?) failed: `)

// simFailed reads the failed verifications of a plan: the seq and the check
// each names (a line in another shape keeps seq 0 and no check, so it explains
// nothing).
func simFailed(lines []string) []pipesim.Failed {
	var out []pipesim.Failed
	for _, l := range lines {
		f := pipesim.Failed{Line: l}
		if m := simFailedLine.FindStringSubmatch(l); m != nil {
			f.Seq, _ = strconv.Atoi(m[1])
			f.Check = m[2]
		}
		out = append(out, f)
	}
	return out
}

// simSandbox is the sandbox of a generated run: its HOME and TMPDIR.
func simSandbox(root string, tr *pipesim.Truth) *Sandbox {
	return &Sandbox{Root: root, Home: tr.Home, Tmp: tr.Tmp}
}

// runSimPlan runs `replay plan --json` in the run's project, as a user would
// after the crash, and decodes it; code is the exit code.
func runSimPlan(t *testing.T, root string, tr *pipesim.Truth) (p simPlan, code int, stderr string) {
	r := simSandbox(root, tr).Run(t, tr.Project, "plan", "--json", "--now", tr.Now.Format(time.RFC3339))
	if r.Code == 0 || strings.HasPrefix(strings.TrimSpace(r.Stdout), "{") {
		if err := json.Unmarshal([]byte(r.Stdout), &p); err != nil {
			return p, -1, "plan --json output is not JSON: " + err.Error()
		}
	}
	return p, r.Code, r.Stderr
}

// runSimResume runs the resume itself in the run's project with a trivial agent
// that reports success, and returns the seqs the new manifest lines replay
// (their replay_of), in order, once per dispatched line.
//
// A dispatch is keyed by its own seq, so a line mirrored into both the live dir
// and the durable copy counts once; unlinked counts dispatched lines with no
// replay_of (work the plan cannot have listed).
func runSimResume(t *testing.T, root string, tr *pipesim.Truth) (replayed []int, unlinked int, code int, stderr string) {
	before := simManifestLines(tr)
	seen := map[[2]int]bool{}
	r := simSandbox(root, tr).Run(t, tr.Project, "--yes", "--agent", "cat >/dev/null; echo SUMMARY: done", "--now", tr.Now.Format(time.RFC3339))
	for path, lines := range simManifestLines(tr) {
		old := map[string]bool{}
		for _, l := range before[path] {
			old[l] = true
		}
		for _, l := range lines {
			if old[l] { // an original line (a torn tail set aside by the appender is simply gone)
				continue
			}
			var e struct {
				Seq      int    `json:"seq"`
				Status   string `json:"status"`
				ReplayOf *int   `json:"replay_of"`
			}
			if json.Unmarshal([]byte(l), &e) != nil || e.Status != "dispatched" {
				continue
			}
			of := -1
			if e.ReplayOf != nil {
				of = *e.ReplayOf
			}
			if seen[[2]int{e.Seq, of}] {
				continue
			}
			seen[[2]int{e.Seq, of}] = true
			if of < 0 {
				unlinked++
			} else {
				replayed = append(replayed, of)
			}
		}
	}
	return replayed, unlinked, r.Code, r.Stdout + "\n" + r.Stderr
}

// simManifestLines returns the lines of every manifest of the run's session (the
// live dispatch dir and the scratch copy). A resume's lines are the ones that
// were not there before: it appends, and only ever sets a torn last line aside.
func simManifestLines(tr *pipesim.Truth) map[string][]string {
	out := map[string][]string{}
	for path := range simManifestSizes(tr) {
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		out[path] = strings.Split(string(data), "\n")
	}
	return out
}

// simManifestSizes returns the size of every manifest of the run's session (the
// live dispatch dir and the scratch copy).
func simManifestSizes(tr *pipesim.Truth) map[string]int64 {
	sizes := map[string]int64{}
	globs := []string{
		filepath.Join(tr.Tmp, "crucible-dispatch-"+tr.Session, "manifest.jsonl"),
		filepath.Join(tr.Home, ".claude", "projects", "*", "memory", "crucible-dispatch-"+tr.Session, "manifest.jsonl"),
	}
	for _, g := range globs {
		matches, _ := filepath.Glob(g)
		for _, m := range matches {
			if fi, err := os.Stat(m); err == nil {
				sizes[m] = fi.Size()
			}
		}
	}
	return sizes
}
