package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/manifest"
)

func newSim(t *testing.T) Agent {
	t.Helper()
	a, err := New(SpecSim, Options{})
	require.NoError(t, err)
	assert.Equal(t, SpecSim, a.Name())
	return a
}

func mustLines(n int) string {
	var b strings.Builder
	b.WriteString("# Reviewer\n\nReview the task.\n")
	for i := 0; i < n; i++ {
		b.WriteString("- The code MUST handle case " + string(rune('a'+i)) + ".\n")
	}
	return b.String()
}

func TestSimImplementerCommits(t *testing.T) {
	t.Parallel()
	req := newRequest(t, 21, "implementer", "build-implementer", intp(3), "Implement task 3.\n", true)
	parent := headCommit(t, req.WorkDir)
	resp, err := newSim(t).Run(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, manifest.StatusCompleted, resp.Status, resp.Reason)

	c := headCommit(t, req.WorkDir)
	assert.Equal(t, "implementer: task 3 (replay sim)", c.Message)
	assert.Contains(t, c.Message, "task 3")
	assert.Equal(t, []string{parent.Hash.String()}, []string{c.ParentHashes[0].String()})
	assert.Equal(t, "replay-sim", c.Author.Name)
	assert.Equal(t, "sim@replay.local", c.Committer.Email)
	assert.True(t, c.Author.When.Equal(fixedNow))
	assert.Equal(t, "Task 3: implementer committed "+c.Hash.String()[:7], resp.Summary)
	assert.Empty(t, resp.Verdict)

	f, err := c.File("sim/task-3/implementer.txt")
	require.NoError(t, err)
	content, err := f.Contents()
	require.NoError(t, err)
	onDisk, err := os.ReadFile(filepath.Join(req.WorkDir, "sim", "task-3", "implementer.txt"))
	require.NoError(t, err)
	assert.Equal(t, string(onDisk), content)
	_, err = c.File("README.md")
	assert.NoError(t, err, "the commit keeps the rest of the tree")
}

func TestSimMutatingRoleWithoutTask(t *testing.T) {
	t.Parallel()
	req := newRequest(t, 5, "plan-writer", "plan-writer", nil, "Write the plan.\n", true)
	resp, err := newSim(t).Run(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, manifest.StatusCompleted, resp.Status, resp.Reason)
	c := headCommit(t, req.WorkDir)
	assert.Equal(t, "plan-writer (replay sim)", c.Message)
	assert.Equal(t, "plan-writer committed "+c.Hash.String()[:7], resp.Summary)
	_, err = c.File("sim/plan-writer.txt")
	assert.NoError(t, err)
}

func TestSimIsDeterministic(t *testing.T) {
	t.Parallel()
	run := func() (string, string) {
		req := newRequest(t, 21, "build-implementer", "build-implementer", intp(3), "Implement task 3.\n", true)
		resp, err := newSim(t).Run(context.Background(), req)
		require.NoError(t, err)
		return headCommit(t, req.WorkDir).Hash.String(), resp.Summary
	}
	h1, s1 := run()
	h2, s2 := run()
	assert.Equal(t, h1, h2)
	assert.Equal(t, s1, s2)
}

func TestSimBodyChangesTheCommit(t *testing.T) {
	t.Parallel()
	a := newRequest(t, 21, "implementer", "build-implementer", intp(3), "Implement task 3.\n", true)
	b := newRequest(t, 21, "implementer", "build-implementer", intp(3), "Implement task 3 carefully.\n", true)
	for _, req := range []Request{a, b} {
		_, err := newSim(t).Run(context.Background(), req)
		require.NoError(t, err)
	}
	assert.NotEqual(t, headCommit(t, a.WorkDir).TreeHash, headCommit(t, b.WorkDir).TreeHash)
}

func TestSimParallelImplementersShareOneBranch(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	initRepo(t, work)
	dir := t.TempDir()
	sim := newSim(t)
	var wg sync.WaitGroup
	for task := 1; task <= 3; task++ {
		req := requestIn(t, dir, work, 20+task, "implementer", "build-implementer", intp(task), "Implement a task.\n")
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := sim.Run(context.Background(), req)
			assert.NoError(t, err)
			assert.Equal(t, manifest.StatusCompleted, resp.Status, resp.Reason)
		}()
	}
	wg.Wait()
	var msgs []string
	c := headCommit(t, work)
	for len(c.ParentHashes) > 0 {
		msgs = append(msgs, c.Message)
		for task := 1; task <= 3; task++ {
			if strings.Contains(c.Message, "task "+string(rune('0'+task))) {
				_, err := c.File(SimFile("implementer", intp(task)))
				assert.NoError(t, err, "each commit has its own file")
			}
		}
		var err error
		c, err = c.Parent(0)
		require.NoError(t, err)
	}
	sort.Strings(msgs)
	assert.Equal(t, []string{"implementer: task 1 (replay sim)", "implementer: task 2 (replay sim)", "implementer: task 3 (replay sim)"}, msgs)
}

func TestSimNotARepository(t *testing.T) {
	t.Parallel()
	req := newRequest(t, 21, "implementer", "build-implementer", intp(3), "x\n", false)
	resp, err := newSim(t).Run(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, manifest.StatusFailed, resp.Status)
	assert.Contains(t, resp.Reason, "not a git working tree")
}

func TestSimReviewerVerdicts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		musts    int
		verdict  string
		summary  string
		findings int
	}{
		{0, "PASS", "Task 2 PASS: 0 findings", 0},
		{2, "PASS", "Task 2 PASS: 2 findings", 2},
		{3, "FAIL", "Task 2 FAIL: 3 findings", 3},
	}
	for _, tt := range tests {
		t.Run(tt.verdict+string(rune('0'+tt.musts)), func(t *testing.T) {
			req := newRequest(t, 15, "reviewer", "build-reviewer", intp(2), mustLines(tt.musts), false)
			resp, err := newSim(t).Run(context.Background(), req)
			require.NoError(t, err)
			require.Equal(t, manifest.StatusCompleted, resp.Status, resp.Reason)
			assert.Equal(t, tt.summary, resp.Summary)
			assert.Equal(t, tt.verdict, resp.Verdict)

			path := filepath.Join(req.DispatchDir, "15-build-reviewer-findings.md")
			findings, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Contains(t, string(findings), "**Verdict:** "+tt.verdict)
			assert.Equal(t, tt.findings, strings.Count(string(findings), ". Check: "))

			receipts, warns, err := manifest.ReadReceipts(filepath.Join(req.DispatchDir, manifest.ReceiptLedgerFile))
			require.NoError(t, err)
			assert.Empty(t, warns)
			sum := sha256.Sum256(findings)
			assert.Equal(t, []manifest.Receipt{{DispatchID: "15-build-reviewer", Phase: "3", RcptSHA256: hex.EncodeToString(sum[:]), Verdict: tt.verdict}}, receipts)

			files, err := manifest.ReadDispatchDir(req.DispatchDir)
			require.NoError(t, err)
			require.Len(t, files, 2)
			assert.Equal(t, manifest.KindOutput, files[1].Kind)
		})
	}
}

func TestSimReceiptAfterATornLine(t *testing.T) {
	t.Parallel()
	req := newRequest(t, 15, "red-team", "red-team", nil, "Attack.\n", false)
	ledger := filepath.Join(req.DispatchDir, manifest.ReceiptLedgerFile)
	require.NoError(t, os.WriteFile(ledger, []byte(`{"dispatch_id":"12-build-rev`), 0o644))
	resp, err := newSim(t).Run(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, "red-team PASS: 0 findings", resp.Summary)
	receipts, warns, err := manifest.ReadReceipts(ledger)
	require.NoError(t, err)
	assert.Len(t, warns, 1, "the torn line stays torn")
	require.Len(t, receipts, 1)
	assert.Equal(t, "15-red-team", receipts[0].DispatchID)
}

func TestSimGatesPrintAVerdictOnly(t *testing.T) {
	t.Parallel()
	tests := []struct {
		role    string
		musts   int
		output  string
		summary string
	}{
		{"quality-gate", 0, "PASS\nSUMMARY: Task 2 PASS: 0 checks\n", "Task 2 PASS: 0 checks"},
		{"quality-gate", 3, "FAIL\nSUMMARY: Task 2 FAIL: 3 checks\n", "Task 2 FAIL: 3 checks"},
		{"release-notes-writer", 4, "FAIL\nSUMMARY: Task 2 FAIL: 4 checks\n", "Task 2 FAIL: 4 checks"},
	}
	for _, tt := range tests {
		t.Run(tt.role, func(t *testing.T) {
			req := newRequest(t, 30, tt.role, tt.role, intp(2), mustLines(tt.musts), true)
			before := headCommit(t, req.WorkDir).Hash
			resp, err := newSim(t).Run(context.Background(), req)
			require.NoError(t, err)
			assert.Equal(t, manifest.StatusCompleted, resp.Status)
			assert.Equal(t, tt.output, string(resp.Output))
			assert.Equal(t, len(tt.output), resp.OutputChars)
			assert.Equal(t, tt.summary, resp.Summary)
			entries, err := os.ReadDir(req.DispatchDir)
			require.NoError(t, err)
			assert.Len(t, entries, 1, "only the dispatch file")
			assert.Equal(t, before, headCommit(t, req.WorkDir).Hash, "no commit")
		})
	}
}

func TestSimChecks(t *testing.T) {
	t.Parallel()
	assert.Equal(t, []string{"You must test.", "MUST NOT skip", "Mustard counts too"}, SimChecks([]byte("You must test.\nno\n  MUST NOT skip\nMustard counts too\n")))
	assert.Empty(t, SimChecks(nil))
}

func TestSimInterrupted(t *testing.T) {
	t.Parallel()
	req := newRequest(t, 21, "implementer", "build-implementer", intp(3), "x\n", true)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	resp, err := newSim(t).Run(ctx, req)
	require.NoError(t, err)
	assert.Equal(t, manifest.StatusError, resp.Status)
}
