package e2e

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/testkit/testtools"
)

var updateCorpus = flag.Bool("update", false, "rewrite the corpus's expected-plan.md golden files (never expect.json)")

// corpusPending lists the corpus cases whose expected facts need fixes from another
// branch: they are run, and skipped with the reason while their facts do not hold.
// A pending case whose facts hold fails, so the mark is removed once it passes; its
// expected-plan.md is then created with -update (pending cases have none, so no
// golden file records behaviour the facts call wrong).
var corpusPending = map[string]string{}

// corpusExpect is a case's expect.json: how to run `replay plan` on the built
// pipeline, and the key facts of the correct plan, written by hand from the
// scenario.
type corpusExpect struct {
	Scenario string `json:"scenario"`
	// Dir is the working directory, relative to the output root; PWD, when set, is
	// the $PWD the shell would have there (a symlinked path), relative too.
	Dir string `json:"dir"`
	PWD string `json:"pwd"`
	// TZ is the zone of the machine replay runs on (default UTC): the machine that
	// ran the pipeline, whose wall clock stamped the checkpoint subjects.
	TZ   string   `json:"tz"`
	Args []string `json:"args"` // after "plan"; {ROOT} and {TMP} are replaced
	Now  string   `json:"now"`
	Exit int      `json:"exit"`

	Profile          string `json:"profile"`
	ProfileReason    string `json:"profile_reason"`
	ResumeCheckpoint string `json:"resume_checkpoint"` // checkpoint reason in the resume point; "" = none
	CrashedAt        string `json:"crashed_at"`        // substring of crashed_at
	Skip             []int  `json:"skip"`
	Redo             []int  `json:"redo"`
	NextSeq          int    `json:"next_seq"`
	// Partial, when given, are the seqs charged with partial commits (commits of
	// work that did not complete, undone by the restore), in plan order.
	Partial    []int    `json:"partial"`
	Warnings   []string `json:"warnings"`    // each a substring of some warning
	NoWarnings []string `json:"no_warnings"` // substrings no warning may contain
}

type corpusPlan struct {
	Profile       string `json:"profile"`
	ProfileReason string `json:"profile_reason"`
	CrashedAt     string `json:"crashed_at"`
	ResumePoint   string `json:"resume_point"`
	NextSeq       int    `json:"next_seq"`
	Skip          []struct {
		Seq int `json:"seq"`
	} `json:"skip"`
	Redo []struct {
		Seq int `json:"seq"`
	} `json:"redo"`
	Partial  []string `json:"partial_commits"`
	Warnings []string `json:"warnings"`
}

// corpusResume is what the --json document of a resume says it re-dispatched.
type corpusResume struct {
	Redispatch []struct {
		Seq      int `json:"seq"`
		ReplayOf int `json:"replay_of"`
	} `json:"redispatch"`
}

// TestCorpus builds every case of testdata/corpus with its script (the git binary,
// `replay manifest before/after`, upstream's file shapes) and checks the plan
// replay makes of it against the case's expect.json and expected-plan.md.
func TestCorpus(t *testing.T) {
	testtools.Git(t, "the corpus scripts need the git binary")
	cases, err := filepath.Glob(filepath.Join("..", "testdata", "corpus", "*", "build.sh"))
	require.NoError(t, err)
	require.NotEmpty(t, cases)
	for _, script := range cases {
		dir := filepath.Dir(script)
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			runCorpusCase(t, name, dir)
		})
	}
}

func runCorpusCase(t *testing.T, name, dir string) {
	data, err := os.ReadFile(filepath.Join(dir, "expect.json"))
	require.NoError(t, err)
	var want corpusExpect
	require.NoError(t, json.Unmarshal(data, &want), "%s/expect.json", dir)

	s := NewSandbox(t)
	buildCorpusCase(t, s, dir)

	args := []string{"plan"}
	for _, a := range want.Args {
		args = append(args, strings.NewReplacer("{ROOT}", s.Root, "{TMP}", s.Tmp).Replace(a))
	}
	args = append(args, "--now", want.Now)
	cwd := filepath.Join(s.Root, want.Dir)
	if want.PWD != "" {
		s.Env = append(s.Env, "PWD="+filepath.Join(s.Root, want.PWD))
		cwd = filepath.Join(s.Root, want.PWD)
	}
	if want.TZ != "" {
		s.Env = append(s.Env, "TZ="+want.TZ)
	}
	js := s.Run(t, cwd, append(args, "--json")...)
	md := s.Run(t, cwd, args...)

	problems := corpusFacts(want, js)
	if len(problems) == 0 && want.Exit == 0 {
		// The golden file first: it is the plan, before the resume changes the run.
		if _, pending := corpusPending[name]; !pending {
			compareGolden(t, filepath.Join(dir, "expected-plan.md"), normalisePlan(md.Stdout, s.Root))
		}
		problems = resumeProblems(t, s, cwd, args[1:], js)
	}
	if reason, pending := corpusPending[name]; pending {
		if len(problems) > 0 {
			t.Skipf("pending (%s); the plan does not yet match:\n- %s", reason, strings.Join(problems, "\n- "))
		}
		t.Errorf("case %s passes now: remove it from corpusPending (%s)", name, reason)
		return
	}
	if len(problems) > 0 {
		t.Fatalf("%s: %s\nthe plan differs from expect.json:\n- %s\nstderr: %s", name, want.Scenario, strings.Join(problems, "\n- "), js.Stderr)
	}
}

// resumeProblems runs the resume the plan describes, with the same arguments and
// an agent that completes every dispatch, and lists every way it differs from the
// plan: it must re-dispatch exactly the plan's work items, in the plan's order,
// from the plan's next seq (one decision, rendered by plan, executed by resume).
func resumeProblems(t *testing.T, s *Sandbox, cwd string, args []string, planJS Result) []string {
	t.Helper()
	var plan corpusPlan
	if err := json.Unmarshal([]byte(planJS.Stdout), &plan); err != nil {
		return []string{fmt.Sprintf("plan --json output is not JSON: %v", err)}
	}
	var planned []int
	for _, d := range plan.Redo {
		planned = append(planned, d.Seq)
	}
	run := append(append([]string{}, args...), "--yes", "--json", "--agent", `sh -c "cat >/dev/null; echo SUMMARY: done"`)
	r := s.Run(t, cwd, run...)
	if r.Code != 0 {
		return []string{fmt.Sprintf("the resume exited %d: %s", r.Code, r.Stderr)}
	}
	var got corpusResume
	if len(planned) == 0 {
		if strings.Contains(r.Stdout, `"redispatch": [{`) {
			return []string{"the plan lists nothing to redo but the resume re-dispatched: " + r.Stdout}
		}
		return nil
	}
	if err := json.Unmarshal([]byte(r.Stdout), &got); err != nil {
		return []string{fmt.Sprintf("the plan lists seqs %v to redo but the resume printed no --json document (%v): %s", planned, err, r.Stdout)}
	}
	var executed []int
	var bad []string
	for i, d := range got.Redispatch {
		executed = append(executed, d.ReplayOf)
		if d.Seq != plan.NextSeq+i {
			bad = append(bad, fmt.Sprintf("re-dispatch %d got seq %d; the plan's next seq is %d", i+1, d.Seq, plan.NextSeq))
		}
	}
	if !slices.Equal(planned, executed) {
		bad = append(bad, fmt.Sprintf("the resume re-dispatched the work of seqs %v; the plan listed %v", executed, planned))
	}
	return bad
}

// buildCorpusCase runs the build.sh of the corpus case in dir with the sandbox's
// root as its output root.
func buildCorpusCase(t *testing.T, s *Sandbox, dir string) {
	t.Helper()
	script, err := filepath.Abs(filepath.Join(dir, "build.sh"))
	require.NoError(t, err)
	build := exec.Command("sh", script, s.Root)
	build.Env = append(s.Environ(), "REPLAY="+binPath)
	out, err := build.CombinedOutput()
	require.NoError(t, err, "build.sh: %s", out)
}

// corpusFacts lists every way the --json plan run differs from the expected facts.
func corpusFacts(want corpusExpect, r Result) []string {
	var bad []string
	if r.Code != want.Exit {
		bad = append(bad, fmt.Sprintf("exit %d, want %d (stderr %q)", r.Code, want.Exit, r.Stderr))
	}
	if want.Exit != 0 {
		return bad
	}
	var got corpusPlan
	if err := json.Unmarshal([]byte(r.Stdout), &got); err != nil {
		return append(bad, fmt.Sprintf("plan --json output is not JSON: %v", err))
	}
	check := func(ok bool, format string, args ...any) {
		if !ok {
			bad = append(bad, fmt.Sprintf(format, args...))
		}
	}
	check(got.Profile == want.Profile, "profile %q, want %q", got.Profile, want.Profile)
	check(strings.Contains(got.ProfileReason, want.ProfileReason), "profile reason %q, want it to contain %q", got.ProfileReason, want.ProfileReason)
	if want.ResumeCheckpoint == "" {
		check(strings.Contains(got.ResumePoint, "start of the pipeline") || strings.Contains(got.ResumePoint, "no checkpoint"), "resume point %q, want no checkpoint", got.ResumePoint)
	} else {
		check(strings.Contains(got.ResumePoint, "("+want.ResumeCheckpoint+", checkpoint"), "resume point %q, want checkpoint %s", got.ResumePoint, want.ResumeCheckpoint)
	}
	check(strings.Contains(got.CrashedAt, want.CrashedAt), "crashed at %q, want it to contain %q", got.CrashedAt, want.CrashedAt)
	var skip, redo []int
	for _, d := range got.Skip {
		skip = append(skip, d.Seq)
	}
	for _, d := range got.Redo {
		redo = append(redo, d.Seq)
	}
	check(slices.Equal(skip, want.Skip), "skipped seqs %v, want %v", skip, want.Skip)
	check(slices.Equal(redo, want.Redo), "re-executed seqs %v, want %v", redo, want.Redo)
	check(got.NextSeq == want.NextSeq, "next seq %d, want %d", got.NextSeq, want.NextSeq)
	if want.Partial != nil {
		var partial []int
		for _, line := range got.Partial {
			if m := partialSeq.FindStringSubmatch(line); m != nil {
				n, _ := strconv.Atoi(m[1])
				partial = append(partial, n)
			}
		}
		partial = slices.Compact(partial)
		check(slices.Equal(partial, want.Partial), "partial commits charged to seqs %v, want %v (%q)", partial, want.Partial, got.Partial)
	}
	all := strings.Join(got.Warnings, "\n")
	for _, w := range want.Warnings {
		check(strings.Contains(all, w), "no warning contains %q; warnings:\n%s", w, all)
	}
	for _, w := range want.NoWarnings {
		check(!strings.Contains(all, w), "a warning contains %q; warnings:\n%s", w, all)
	}
	return bad
}

// partialSeq reads the seq a partial-commit line of the plan charges.
var partialSeq = regexp.MustCompile(` — seq (\d+) `)

var hashDirs = regexp.MustCompile(`(projects|checkpoints)/[0-9a-f]{16}`)

// normalisePlan templates the output root and the project hash of a plan.
func normalisePlan(s, root string) string {
	s = strings.ReplaceAll(s, root, "<ROOT>")
	return hashDirs.ReplaceAllString(s, "$1/<H>")
}

func compareGolden(t *testing.T, path, got string) {
	t.Helper()
	if *updateCorpus {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./e2e -run TestCorpus -update to create %s", path)
	require.Equal(t, string(want), got, "%s differs; if the change is intended, refresh it with -update", path)
}
