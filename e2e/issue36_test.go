package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/fixture"
	"github.com/replaytool/replay/manifest"
)

// issue36Pending lists the symptoms of issue 36 ("What goes wrong today") the
// product still shows, with why: each test runs in full and is skipped while it
// finds the symptom; a pending symptom that no longer shows fails the test, so
// its mark goes in the commit that fixes it.
var issue36Pending = map[string]string{}

// issue36Verdict ends a symptom test: the problems found are the symptom; a
// pending symptom is skipped while it shows and fails once it is gone.
func issue36Verdict(t *testing.T, name string, problems []string) {
	t.Helper()
	if reason, pending := issue36Pending[name]; pending {
		if len(problems) > 0 {
			t.Skipf("pending (%s):\n- %s", reason, strings.Join(problems, "\n- "))
		}
		t.Fatalf("symptom %s no longer shows: remove it from issue36Pending (%s)", name, reason)
	}
	if len(problems) > 0 {
		t.Fatalf("%s:\n- %s", name, strings.Join(problems, "\n- "))
	}
}

// problems collects what a symptom test finds wrong.
type problems []string

func (p *problems) check(ok bool, format string, args ...any) {
	if !ok {
		*p = append(*p, fmt.Sprintf(format, args...))
	}
}

// orchestrator continues a pipeline the way Crucible's orchestrator does after a
// resume: dispatch files with the audit header, and the manifest lines of
// upstream's scripts/dispatch.py through `replay manifest` (its drop-in,
// byte-compatible), checkpoints through `replay checkpoint create`.
type orchestrator struct {
	t    *testing.T
	s    *Sandbox
	p    *fixture.Pipeline
	dir  string // the dispatch dir it writes to
	repo string // the project
}

func (o *orchestrator) run(at time.Time, args ...string) Result {
	o.t.Helper()
	r := o.s.Run(o.t, o.repo, append(args, "--now", at.UTC().Format(time.RFC3339))...)
	require.Equal(o.t, 0, r.Code, "replay %v: %s", args, r.Stderr)
	return r
}

// checkpoint takes a shadow checkpoint with reason at.
func (o *orchestrator) checkpoint(at time.Time, reason string) {
	o.t.Helper()
	o.run(at, "checkpoint", "create", "--reason", reason, "--source", "build", "--repo", o.repo)
}

// dispatch writes seq's dispatch file (template, phase, task, body) at and
// appends its dispatched line; it returns the seq.
func (o *orchestrator) dispatch(at time.Time, template, role, phase string, task int, body string) int {
	o.t.Helper()
	r := o.run(at, "manifest", "seq", "--dir", o.dir)
	seq, err := strconv.Atoi(strings.TrimSpace(r.Stdout))
	require.NoError(o.t, err, r.Stdout)
	file := fmt.Sprintf("%d-%s.md", seq, template)
	h := manifest.DispatchHeader{Template: template, Pipeline: "build", Phase: phase, Timestamp: at, DispatchDir: o.dir + "/"}
	args := []string{"manifest", "before", "--dir", o.dir, "--seq", strconv.Itoa(seq), "--file", filepath.Join(o.dir, file), "--role", role, "--model-tier", "opus"}
	if phase != "" {
		args = append(args, "--phase", phase)
	}
	if task > 0 {
		h.Task = strconv.Itoa(task)
		args = append(args, "--task", strconv.Itoa(task))
	}
	require.NoError(o.t, os.WriteFile(filepath.Join(o.dir, file), manifest.FormatDispatchFile(h, []byte(body)), 0o644))
	o.run(at, args...)
	return seq
}

// done appends seq's completion line with status after d.
func (o *orchestrator) done(at time.Time, seq int, status string, d time.Duration) {
	o.t.Helper()
	o.run(at, "manifest", "after", "--dir", o.dir, "--seq", strconv.Itoa(seq), "--status", status, "--duration", strconv.Itoa(int(d.Seconds())), "--summary", status)
}

// commit makes a project commit at.
func (o *orchestrator) commit(at time.Time, file, msg string) {
	o.t.Helper()
	writeFile(o.t, o.repo, file, msg+"\n", 0o644)
	date := at.UTC().Format(time.RFC3339)
	for _, args := range [][]string{{"add", "-A"}, {"commit", "-q", "-m", msg}} {
		cmd := o.s.Git(args...)
		cmd.Dir = o.repo
		cmd.Env = append(cmd.Env, "GIT_AUTHOR_NAME=agent", "GIT_AUTHOR_EMAIL=agent@example.invalid", "GIT_COMMITTER_NAME=agent", "GIT_COMMITTER_EMAIL=agent@example.invalid", "GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date)
		out, err := cmd.CombinedOutput()
		require.NoError(o.t, err, "git %v: %s", args, out)
	}
}

// planJSON is what these tests read of `replay plan --json`.
type planJSON struct {
	Checkpoint  string `json:"checkpoint"`
	ResumePoint string `json:"resume_point"`
	NextSeq     int    `json:"next_seq"`
	Skip        []struct {
		Seq int `json:"seq"`
	} `json:"skip"`
	Redo []struct {
		Seq  int    `json:"seq"`
		Role string `json:"role"`
		Run  string `json:"run"`
	} `json:"redo"`
	Partial             []string `json:"partial_commits"`
	FailedVerifications []string `json:"failed_verifications"`
	Warnings            []string `json:"warnings"`
}

func (o *orchestrator) plan(at time.Time, args ...string) (planJSON, Result) {
	o.t.Helper()
	r := o.s.Run(o.t, o.repo, append(append([]string{"plan", "--json", o.p.Scratch}, args...), "--now", at.UTC().Format(time.RFC3339))...)
	var p planJSON
	if r.Code == 0 {
		require.NoError(o.t, json.Unmarshal([]byte(r.Stdout), &p), r.Stdout)
	}
	return p, r
}

// buildScript runs a corpus-style build script (testdata/corpus/lib.sh, the
// conventions of upstream's dispatch.py and checkpoint skill) with body as its
// steps, in the sandbox root.
func buildScript(t *testing.T, s *Sandbox, body string) {
	t.Helper()
	lib, err := filepath.Abs(filepath.Join("..", "testdata", "corpus", "lib.sh"))
	require.NoError(t, err)
	script := filepath.Join(t.TempDir(), "build.sh")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\nTZ=UTC\nOFF=+00:00\nexport TZ\n. "+lib+"\n"+body), 0o755))
	build := exec.Command("sh", script, s.Root)
	build.Env = append(s.Environ(), "REPLAY="+binPath)
	out, err := build.CombinedOutput()
	require.NoError(t, err, "build.sh: %s", out)
}

func redoSeqs(p planJSON) []int {
	out := []int{}
	for _, r := range p.Redo {
		out = append(out, r.Seq)
	}
	return out
}

func skipSeqs(p planJSON) map[int]bool {
	out := map[int]bool{}
	for _, r := range p.Skip {
		out[r.Seq] = true
	}
	return out
}

// Symptom 1: a run resumed once (restored, wave 2 re-dispatched as replays, a
// fresh pre-wave-2 and then pre-wave-3 taken by the resumed session) that
// crashed again in wave 3 resumes from pre-wave-3: the resumed session's own
// latest provable boundary, keeping its verified commits; wave 2's original
// attempts, superseded by their replays, are not verified on their own.
func TestIssue36ResumedRunCrashedAgainResumesFromItsOwnBoundary(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	o := &orchestrator{t: t, s: s, p: p, dir: p.DurableDispatchDir, repo: p.Project}
	// Wave 2 held a second task, completed with its commit before the crash.
	at := func(off int) time.Time { return fixture.Start.Add(time.Duration(off) * time.Second) }
	s21 := o.dispatch(at(8050), "build-implementer", "build-implementer", "3", 4, "implement task 4\n## Context\nTask 4: rate limit of login attempts\n")
	o.commit(at(8150), "internal/ratelimit/limit.go", "feat: task 4 rate limit")
	o.done(at(8200), s21, "completed", 150*time.Second)

	// The first resume: restore, then the orchestrator takes a fresh pre-wave-2,
	// then replay re-dispatches wave 2 with an agent that commits its task.
	t1 := p.Now
	o.run(t1, p.Scratch, "--yes")
	o.checkpoint(t1.Add(time.Minute), "pre-wave-2")
	t2 := t1.Add(2 * time.Minute)
	commit := fmt.Sprintf("mkdir -p tasks && echo done >tasks/$REPLAY_TASK.txt && git add tasks && GIT_AUTHOR_NAME=agent GIT_AUTHOR_EMAIL=agent@example.invalid GIT_COMMITTER_NAME=agent GIT_COMMITTER_EMAIL=agent@example.invalid GIT_AUTHOR_DATE=%[1]s GIT_COMMITTER_DATE=%[1]s git commit -q -m \"feat: task $REPLAY_TASK done\"\n", t2.UTC().Format(time.RFC3339))
	ag := writeAgent(t, p, "agent.sh", "cat >/dev/null\n"+commit+"echo \"SUMMARY: task $REPLAY_TASK done\"\n")
	o.run(t2, p.Scratch, "--yes", "--agent", ag)
	head := gitOut(t, s, p.Project, "rev-parse", "HEAD")

	// The resumed session goes on: pre-wave-3, two implementers; one completes
	// with its commit, the other is in flight at the second crash.
	o.checkpoint(t2.Add(10*time.Minute), "pre-wave-3")
	s5 := o.dispatch(t2.Add(11*time.Minute), "build-implementer", "build-implementer", "3", 5, "implement task 5\n## Context\nTask 5: session expiry\n")
	s6 := o.dispatch(t2.Add(11*time.Minute+time.Second), "build-implementer", "build-implementer", "3", 6, "implement task 6\n## Context\nTask 6: logout\n")
	o.commit(t2.Add(15*time.Minute), "internal/session/expiry.go", "feat: task 5 session expiry")
	o.done(t2.Add(16*time.Minute), s5, "completed", 5*time.Minute)

	var bad problems
	plan, r := o.plan(t2.Add(30 * time.Minute))
	require.Equal(t, 0, r.Code, r.Stderr)

	bad.check(strings.Contains(plan.ResumePoint, "wave 3") && strings.Contains(plan.ResumePoint, "pre-wave-3"), "resume point %q, want the resumed session's pre-wave-3", plan.ResumePoint)
	bad.check(fmt.Sprint(redoSeqs(plan)) == fmt.Sprint([]int{s5, s6}), "re-executes items %v, want only wave 3's %v", redoSeqs(plan), []int{s5, s6})
	skip := skipSeqs(plan)
	for _, seq := range []int{19, s21, s21 + 1, s21 + 2} {
		bad.check(skip[seq], "seq %d (wave 2, done by the resumed session) is not skipped", seq)
	}
	bad.check(len(plan.FailedVerifications) == 0, "verification failures %v", plan.FailedVerifications)
	if len(bad) == 0 {
		// The resume keeps the resumed session's verified wave-2 commits.
		r = s.Run(t, p.Project, p.Scratch, "--yes", "--now", t2.Add(31*time.Minute).UTC().Format(time.RFC3339))
		bad.check(r.Code == 0, "resume exit %d: %s", r.Code, r.Stderr)
		out := gitOut(t, s, p.Project, "merge-base", "--is-ancestor", head, "HEAD")
		_ = out
		cmd := s.Git("-C", p.Project, "merge-base", "--is-ancestor", head, "HEAD")
		bad.check(cmd.Run() == nil, "the restore dropped the resumed session's wave-2 commits (%s) from the branch", head[:8])
	}
	issue36Verdict(t, "resumed-run-crashed-again", bad)
}

// gitOut runs the git binary in dir and returns its trimmed output.
func gitOut(t *testing.T, s *Sandbox, dir string, args ...string) string {
	t.Helper()
	cmd := s.Git(append([]string{"-C", dir}, args...)...)
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// wordsPipeline is a run of a skill with no profile ("audit") whose phases are
// named by words: survey, scan, triage, fix, each opened by a checkpoint.
const wordsPipeline = `project_init chore/audit
session 1775566800
marker audit fix chore/audit "2026-04-07 09:00:00"
dispatch_active 6
shadow_init
dispatch 1 surveyor surveyor survey - "2026-04-07 09:01:00" audit "Survey services/ for entry points. Write your findings to 1-surveyor-output.md."
output 1 surveyor "12 entry points"
done_ 1 completed 120 "12 entry points"
checkpoint pre-scan "2026-04-07 09:05:00" audit
`

// Symptom 2: naming the crashed phase of a skill with no profile resolves to
// that phase's start, by --from-phase and by --from-seq, and a refusal names
// the flag the user typed.
func TestIssue36FromPhaseOfTheCrashedPhase(t *testing.T) {
	t.Parallel()
	s := NewSandbox(t)
	buildScript(t, s, wordsPipeline+`
dispatch 2 scanner scanner scan - "2026-04-07 09:06:00" audit "Scan services/billing for leaked secrets. Write your findings to 2-scanner-output.md."
output 2 scanner "no secrets"
done_ 2 completed 120 "no secrets"
checkpoint pre-triage "2026-04-07 09:10:00" audit
dispatch 3 triager triager triage - "2026-04-07 09:11:00" audit "Triage the scan findings. Write your findings to 3-triager-output.md."
output 3 triager "nothing to fix"
done_ 3 completed 60 "nothing to fix"
checkpoint pre-fix "2026-04-07 09:15:00" audit
dispatch 4 fixer fixer fix - "2026-04-07 09:16:00" audit "Fix the findings. Commit your work."
`)
	project := filepath.Join(s.Root, "project")
	now := "--now=2026-04-07T12:00:00Z"
	var bad problems
	base := s.Run(t, project, "plan", "--json", now)
	require.Equal(t, 0, base.Code, base.Stderr)
	var detected planJSON
	require.NoError(t, json.Unmarshal([]byte(base.Stdout), &detected))
	for _, args := range [][]string{{"--from-phase", "fix"}, {"--from-seq", "4"}} {
		r := s.Run(t, project, append([]string{"plan", "--json", now}, args...)...)
		bad.check(r.Code == 0, "%v: exit %d: %s", args, r.Code, strings.TrimSpace(r.Stderr))
		if r.Code != 0 {
			continue
		}
		var got planJSON
		require.NoError(t, json.Unmarshal([]byte(r.Stdout), &got))
		bad.check(got.ResumePoint == detected.ResumePoint, "%v: resume point %q, want the phase's start %q", args, got.ResumePoint, detected.ResumePoint)
		bad.check(fmt.Sprint(redoSeqs(got)) == "[4]", "%v: re-executes %v, want [4]", args, redoSeqs(got))
	}
	// A phase after the detected point is refused, naming the flag typed.
	buildMore := exec.Command("sh", "-c", `printf '{"seq":5,"file":"5-fixer.md","role":"fixer","phase":"verify","task":null,"status":"dispatched","duration_s":null,"summary":null,"input_chars":10,"output_chars":null,"model_tier":"opus","tool_calls":null}\n' >>"$0"`, filepath.Join(s.Tmp, "crucible-dispatch-1775566800", "manifest.jsonl"))
	require.NoError(t, buildMore.Run())
	r := s.Run(t, project, "plan", now, "--from-seq", "5")
	if r.Code == 2 {
		bad.check(strings.Contains(r.Stderr, "--from-seq 5"), "the refusal names the flag typed (--from-seq 5): %s", strings.TrimSpace(r.Stderr))
		bad.check(!strings.Contains(r.Stderr, "--from-phase"), "the refusal of --from-seq says --from-phase: %s", strings.TrimSpace(r.Stderr))
	}
	issue36Verdict(t, "from-phase-crashed-phase", bad)
}

// Symptom 3: two task-less dispatches of one role and phase with different
// bodies (one scanned repository X and failed, the next scanned Y) are
// different work: the failed scan of X is not superseded and is redone.
func TestIssue36TasklessFailureIsNotSupersededByOtherWork(t *testing.T) {
	t.Parallel()
	s := NewSandbox(t)
	buildScript(t, s, wordsPipeline+`
dispatch 2 scanner scanner scan - "2026-04-07 09:06:00" audit "Scan repository github.com/acme/billing for leaked secrets. Write your findings to 2-scanner-output.md."
done_ 2 failed 60 "clone of github.com/acme/billing failed"
dispatch 3 scanner scanner scan - "2026-04-07 09:08:00" audit "Scan repository github.com/acme/ledger for leaked secrets. Write your findings to 3-scanner-output.md."
output 3 scanner "ledger: no secrets"
done_ 3 completed 120 "ledger: no secrets"
checkpoint pre-triage "2026-04-07 09:12:00" audit
dispatch 4 triager triager triage - "2026-04-07 09:13:00" audit "Triage the scan findings. Write your findings to 4-triager-output.md."
output 4 triager "nothing to fix"
done_ 4 completed 60 "nothing to fix"
checkpoint pre-fix "2026-04-07 09:15:00" audit
dispatch 5 fixer fixer fix - "2026-04-07 09:16:00" audit "Fix the findings. Commit your work."
`)
	project := filepath.Join(s.Root, "project")
	var bad problems
	r := s.Run(t, project, "plan", "--json", "--now=2026-04-07T12:00:00Z")
	require.Equal(t, 0, r.Code, r.Stderr)
	var got planJSON
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &got))
	redo := redoSeqs(got)
	bad.check(len(redo) > 0 && redo[0] == 2, "re-executes %v: the failed scan of github.com/acme/billing (seq 2) is lost", redo)
	bad.check(strings.Contains(got.ResumePoint, "pre-scan"), "resume point %q, want pre-scan (before the failed scan)", got.ResumePoint)
	bad.check(!strings.Contains(r.Stdout, "superseded by seq 3"), "seq 2 is called superseded by seq 3, a scan of another repository")
	issue36Verdict(t, "taskless-superseded", bad)
}

// Symptom 4: after a resume whose agent answered "completed" without its
// commit, the next resume runs the item live (the agent is called), not the
// recording of the attempt that failed verification; the plan says per item
// whether it runs live or from a recording.
func TestIssue36ResumeDoesNotServeAnEmptyRecordedAnswer(t *testing.T) {
	t.Parallel()
	s, p := pipelineSandbox(t)
	calls := filepath.Join(p.Root, "calls")
	lazy := writeAgent(t, p, "lazy.sh", "cat >/dev/null\necho x >>"+calls+"\necho 'SUMMARY: done'\n")
	r := s.Run(t, p.Project, p.Scratch, "--yes", "--agent", lazy, "--now", now(p))
	require.Equal(t, 0, r.Code, r.Stderr)
	require.Equal(t, "x\n", readFile(t, calls), "the first resume called the agent once")

	var bad problems
	later := p.Now.Add(time.Hour).UTC().Format(time.RFC3339)
	pr := s.Run(t, p.Project, "plan", "--json", p.Scratch, "--agent", lazy, "--now", later)
	require.Equal(t, 0, pr.Code, pr.Stderr)
	var plan planJSON
	require.NoError(t, json.Unmarshal([]byte(pr.Stdout), &plan))
	bad.check(len(plan.Redo) == 1, "plan lists %v, want the one item again", redoSeqs(plan))
	for _, it := range plan.Redo {
		bad.check(it.Run == "live", "plan --json: seq %d runs %q, want \"live\"", it.Seq, it.Run)
	}
	text := s.Run(t, p.Project, "plan", p.Scratch, "--agent", lazy, "--now", later)
	bad.check(strings.Contains(text.Stdout, "| live"), "the plan's text does not say the item runs live:\n%s", text.Stdout)

	r = s.Run(t, p.Project, p.Scratch, "--yes", "--agent", lazy, "--now", later)
	require.Equal(t, 0, r.Code, r.Stderr)
	bad.check(readFile(t, calls) == "x\nx\n", "the second resume called the agent %d times, want 1 more: it served the recorded empty answer", strings.Count(readFile(t, calls), "x")-1)
	issue36Verdict(t, "resume-serves-empty-answer", bad)
}

// twoSessions builds a /build run (session 1775545200, marker) and a /debugging
// run (session 1775545300, found only by .dispatch-active-<sid>) of one project,
// overlapping in time, both crashed with a mutating dispatch in flight; the
// debugging fixer commits inside the build implementer's window.
const twoSessions = `build_two_waves
SID_A=$SID
session 1775545300
dispatch_active 2
dispatch 1 investigator investigator 1 - "2026-04-07 09:49:00" debugging "Investigate the parser crash on empty input."
done_ 1 completed 60 "null deref in parser.Parse"
dispatch 2 fixer fixer 3 - "2026-04-07 09:50:30" debugging "Fix the null dereference in parser.Parse. Commit your work."
commit_at "2026-04-07 09:58:00" "fix: null check in parser.Parse" parser/parse.go
`

// Symptom 5: two sessions in one scratch dir: status lists both, and neither's
// plan charges the other's in-flight commit as its own partial commit (nor
// does its restore undo it).
func TestIssue36TwoSessionsInOneScratchDir(t *testing.T) {
	t.Parallel()
	s := NewSandbox(t)
	buildScript(t, s, twoSessions)
	project := filepath.Join(s.Root, "project")
	now := "--now=2026-04-07T12:00:00Z"
	var bad problems

	r := s.Run(t, project, "status", "--json", now)
	require.Equal(t, 0, r.Code, r.Stderr)
	var st struct {
		Pipelines []struct {
			Session string `json:"session"`
		} `json:"pipelines"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &st))
	sessions := map[string]bool{}
	for _, pl := range st.Pipelines {
		sessions[pl.Session] = true
	}
	bad.check(sessions["1775545200"] && sessions["1775545300"], "status lists sessions %v, want 1775545200 and 1775545300", sessions)
	text := s.Run(t, project, "status", now)
	bad.check(strings.Contains(text.Stdout, "1775545300"), "status text does not list the debugging session:\n%s", text.Stdout)

	r = s.Run(t, project, "plan", "--json", now)
	require.Equal(t, 0, r.Code, r.Stderr)
	var a planJSON
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &a))
	for _, pc := range a.Partial {
		bad.check(!strings.Contains(pc, "null check"), "the build session's plan charges the debugging session's commit as its partial: %s", pc)
	}
	bad.check(len(a.Partial) == 1 && strings.Contains(a.Partial[0], "invoice export"), "build session partial commits %v, want its own wip: task 3 invoice export", a.Partial)

	r = s.Run(t, project, "plan", "--json", filepath.Join(s.Tmp, "crucible-dispatch-1775545300"), now)
	require.Equal(t, 0, r.Code, r.Stderr)
	var b planJSON
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &b))
	for _, pc := range b.Partial {
		bad.check(!strings.Contains(pc, "invoice export"), "the debugging session's plan charges the build session's commit as its partial: %s", pc)
	}

	// The build session's restore moves the branch back past the debugging
	// session's in-flight commit: it keeps it, applied again on the restored
	// base (same message, author and times), and undoes only its own wip.
	fix := gitOut(t, s, project, "log", "--format=%H", "--grep", "null check")
	require.NotEmpty(t, fix)
	oldHead := gitOut(t, s, project, "rev-parse", "HEAD")
	r = s.Run(t, project, "--yes", now)
	bad.check(r.Code == 0, "the build session's resume exits %d: %s", r.Code, strings.TrimSpace(r.Stderr))
	onBranch := gitOut(t, s, project, "log", "--format=%s%x09%an%x09%aI%x09%cI", "HEAD", "--grep", "null check")
	want := gitOut(t, s, project, "log", "-1", "--format=%s%x09%an%x09%aI%x09%cI", fix)
	bad.check(onBranch == want, "after the build session's resume the branch holds %q of the debugging session's commit, want %q", onBranch, want)
	bad.check(readFile(t, filepath.Join(project, "parser", "parse.go")) == "fix: null check in parser.Parse\n", "the debugging session's file is not in the tree after the build session's resume")
	bad.check(gitOut(t, s, project, "log", "--format=%s", "HEAD", "--grep", "invoice export") == "", "the build session's own wip commit is still on the branch")
	bad.check(strings.Contains(r.Stderr, "Kept another run's commit "+fix[:7]), "the resume does not say it kept the other session's commit:\n%s", r.Stderr)
	preRestore := gitOut(t, s, project, "for-each-ref", "--format=%(objectname)", "refs/replay/pre-restore/")
	bad.check(strings.Contains(preRestore, oldHead), "no pre-restore ref keeps the old tip %s (refs: %q)", oldHead[:8], preRestore)

	// The debugging session resumes by its dispatch dir: nothing of the build
	// session's refuses it.
	r = s.Run(t, project, "--yes", filepath.Join(s.Tmp, "crucible-dispatch-1775545300"), now)
	bad.check(r.Code == 0, "the debugging session's resume exits %d: %s", r.Code, strings.TrimSpace(r.Stderr))
	bad.check(gitOut(t, s, project, "log", "--format=%s", "HEAD", "--grep", "null check") != "", "the debugging session's commit left the branch on its own resume")
	issue36Verdict(t, "two-sessions-one-scratch", bad)
}
