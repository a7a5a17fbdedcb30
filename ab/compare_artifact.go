package ab

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/replaytool/replay/manifest"
	"github.com/replaytool/replay/report"
)

// ArtifactStats is the size of the difference between two commits, as
// `git diff --shortstat From To` counts it.
type ArtifactStats struct {
	FilesChanged, Insertions, Deletions int
	// From and To are the full hashes compared; both empty means unknown.
	From, To string
}

// binarySniff is how many leading bytes git looks at for a NUL to call a file binary.
const binarySniff = 8000

// exactDiffLimit bounds the edit distance the exact line diff explores; beyond it a
// file's lines are counted by heuristicDelta (git itself turns heuristic for such
// files, so counts may then differ slightly from git's).
const exactDiffLimit = 5000

// ArtifactDiff counts the files changed and lines inserted and deleted between the
// trees of commits from and to, with git's default rules: renames detected (50%
// similarity), a binary file (a NUL in its first 8000 bytes, either side) counted as
// changed with no lines, lines counted from a minimal line diff, a submodule change
// as one line out and one in.
func ArtifactDiff(repo *git.Repository, from, to plumbing.Hash) (ArtifactStats, error) {
	st := ArtifactStats{From: from.String(), To: to.String()}
	trees := make([]*object.Tree, 2)
	for i, h := range []plumbing.Hash{from, to} {
		c, err := repo.CommitObject(h)
		if err != nil {
			return st, fmt.Errorf("artifact diff: commit %s: %w", h, err)
		}
		if trees[i], err = c.Tree(); err != nil {
			return st, fmt.Errorf("artifact diff: tree of %s: %w", h, err)
		}
	}
	changes, err := object.DiffTreeWithOptions(context.Background(), trees[0], trees[1],
		&object.DiffTreeOptions{DetectRenames: true, RenameScore: 50})
	if err != nil {
		return st, fmt.Errorf("artifact diff %s..%s: %w", from, to, err)
	}
	for _, ch := range changes {
		a, err := entryContent(repo, ch.From)
		if err != nil {
			return st, err
		}
		b, err := entryContent(repo, ch.To)
		if err != nil {
			return st, err
		}
		st.FilesChanged++
		if isBinary(a) || isBinary(b) {
			continue
		}
		ins, del := lineDelta(a, b)
		st.Insertions += ins
		st.Deletions += del
	}
	return st, nil
}

// entryContent returns the content git diffs for one side of a change (nil when the
// side is absent).
func entryContent(repo *git.Repository, e object.ChangeEntry) ([]byte, error) {
	if e.Name == "" {
		return nil, nil
	}
	if e.TreeEntry.Mode == filemode.Submodule {
		return []byte("Subproject commit " + e.TreeEntry.Hash.String() + "\n"), nil
	}
	blob, err := repo.BlobObject(e.TreeEntry.Hash)
	if err != nil {
		return nil, fmt.Errorf("artifact diff: %s: %w", e.Name, err)
	}
	r, err := blob.Reader()
	if err != nil {
		return nil, fmt.Errorf("artifact diff: %s: %w", e.Name, err)
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("artifact diff: %s: %w", e.Name, err)
	}
	return data, nil
}

func isBinary(data []byte) bool {
	return bytes.IndexByte(data[:min(len(data), binarySniff)], 0) >= 0
}

// lineDelta returns the lines inserted and deleted by a minimal line diff of a and b.
func lineDelta(a, b []byte) (ins, del int) {
	la, lb := splitLines(a), splitLines(b)
	ids := map[string]int{}
	intern := func(lines []string) []int {
		out := make([]int, len(lines))
		for i, l := range lines {
			id, ok := ids[l]
			if !ok {
				id = len(ids)
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	x, y := intern(la), intern(lb)
	for len(x) > 0 && len(y) > 0 && x[0] == y[0] {
		x, y = x[1:], y[1:]
	}
	for len(x) > 0 && len(y) > 0 && x[len(x)-1] == y[len(y)-1] {
		x, y = x[:len(x)-1], y[:len(y)-1]
	}
	d, ok := 0, false
	if minDistance(x, y) <= exactDiffLimit {
		d, ok = editDistance(x, y, exactDiffLimit)
	}
	if !ok {
		return heuristicDelta(x, y)
	}
	common := (len(x) + len(y) - d) / 2
	return len(y) - common, len(x) - common
}

// minDistance is a lower bound of the edit distance of a and b: no common
// subsequence is longer than the lines they have in common as multisets.
func minDistance(a, b []int) int {
	count := map[int]int{}
	for _, v := range a {
		count[v]++
	}
	common := 0
	for _, v := range b {
		if count[v] > 0 {
			count[v]--
			common++
		}
	}
	return len(a) + len(b) - 2*common
}

// splitLines splits after every newline; a last line without one is a line too.
func splitLines(data []byte) []string {
	s := string(data)
	var out []string
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

// editDistance is Myers' O((N+M)D) shortest edit script length (insertions plus
// deletions) of a into b; ok is false when it exceeds limit.
func editDistance(a, b []int, limit int) (int, bool) {
	n, m := len(a), len(b)
	maxD := min(n+m, limit)
	off := maxD + 1
	v := make([]int, 2*maxD+3)
	for d := 0; d <= maxD; d++ {
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			v[off+k] = x
			if x >= n && y >= m {
				return d, true
			}
		}
	}
	return 0, false
}

// heuristicDelta counts lines for files too different for the exact diff: the lines
// kept are the longest increasing run of lines that occur exactly once in each file
// (patience anchors), so the counts are never below the minimal diff's.
func heuristicDelta(x, y []int) (ins, del int) {
	count := map[int][2]int{}
	for _, v := range x {
		c := count[v]
		c[0]++
		count[v] = c
	}
	posInY := map[int]int{}
	for i, v := range y {
		c := count[v]
		c[1]++
		count[v] = c
		posInY[v] = i
	}
	var tails []int // patience sorting: tails[k] is the smallest end of a run of length k+1
	for _, v := range x {
		if c := count[v]; c[0] != 1 || c[1] != 1 {
			continue
		}
		p := posInY[v]
		k := sort.SearchInts(tails, p)
		if k == len(tails) {
			tails = append(tails, p)
		} else {
			tails[k] = p
		}
	}
	return len(y) - len(tails), len(x) - len(tails)
}

// Report converts the comparison into the report's plain data; artifact gives the
// artifact diff (From and To empty: unknown).
func (c *Comparison) Report(artifact ArtifactStats) *report.ReplayDiff {
	d := &report.ReplayDiff{
		OriginalSession: c.OriginalSession, ReplaySession: c.ReplaySession, Generated: c.Generated,
		Mutations: append([]string{}, c.Mutations...), ResumeSeq: c.ResumeSeq,
		Metrics: report.DiffMetrics{
			OriginalDispatches: c.OriginalRun.Dispatches, ReplayedDispatches: c.Replayed.Dispatches,
			OriginalGateRounds: c.OriginalRun.GateRounds, ReplayedGateRounds: c.Replayed.GateRounds,
			OriginalDurationM: minutes(c.OriginalRun), ReplayedDurationM: minutes(c.Replayed),
			Reexecuted: c.Reexecuted, ReplayEntries: len(c.Replay),
		},
		Outcome: report.DiffOutcome{Original: c.OriginalRun.Outcome, Replayed: c.Replayed.Outcome},
		Reuse:   c.reuseScore(),
	}
	for _, ph := range c.profile.Phases {
		d.Phases = append(d.Phases, report.PhaseCounts{Phase: ph.ID, Name: ph.Name,
			OriginalDispatches: c.OriginalRun.DispatchesByPhase[ph.ID], ReplayedDispatches: c.Replayed.DispatchesByPhase[ph.ID],
			OriginalGateRounds: c.OriginalRun.GatesByPhase[ph.ID], ReplayedGateRounds: c.Replayed.GatesByPhase[ph.ID]})
	}
	for _, cd := range c.Dispatches {
		d.Dispatches = append(d.Dispatches, comparedRow(cd))
	}
	if dv := c.Divergence; dv != nil {
		rd := &report.Divergence{DispatchComparison: comparedRow(dv.ComparedDispatch), Reason: dv.Reason, Downstream: []report.DownstreamDispatch{}}
		for _, e := range dv.Downstream {
			rd.Downstream = append(rd.Downstream, report.DownstreamDispatch{Seq: e.Seq, Role: e.Role, Phase: phaseOf(&e), Task: taskText(&e)})
		}
		d.FirstDivergence = rd
	}
	if artifact.From != "" || artifact.To != "" {
		d.ArtifactDiff = &report.ArtifactDiff{From: artifact.From, To: artifact.To,
			FilesChanged: artifact.FilesChanged, Insertions: artifact.Insertions, Deletions: artifact.Deletions}
		d.OriginalFinalSHA, d.ReplayFinalSHA = artifact.From, artifact.To
	}
	return d
}

// summaryClip is how much of a replayed summary the per-dispatch table shows.
const summaryClip = 60

func comparedRow(cd ComparedDispatch) report.DispatchComparison {
	var r report.DispatchComparison
	anchor := cd.Replayed
	if o := cd.Original; o != nil {
		anchor = o
		r.OriginalSeq, r.OriginalStatus, r.OriginalDurationS, r.OriginalSummary = o.Seq, string(o.Status), o.DurationS, summaryText(o)
	}
	r.Role, r.Phase, r.Task = anchor.Role, phaseOf(anchor), taskText(anchor)
	if p := cd.Replayed; p != nil {
		r.ReplayedSeq, r.ReplayedStatus, r.ReplayedDurationS, r.ReplayedSummary = p.Seq, string(p.Status), p.DurationS, summaryText(p)
		if p.Mutation != nil {
			r.Mutation = *p.Mutation
		}
	}
	switch {
	case cd.Replayed == nil:
		r.SummaryDelta = "not re-run"
	case cd.RetryOf != 0:
		r.SummaryDelta = fmt.Sprintf("earlier attempt at %d: %s", cd.RetryOf, orNone(report.Clip(r.ReplayedSummary, summaryClip)))
	case cd.Original == nil:
		r.SummaryDelta = "new: " + orNone(report.Clip(r.ReplayedSummary, summaryClip))
	default:
		r.SummaryDelta = report.WordDelta(r.OriginalSummary, r.ReplayedSummary, summaryClip)
	}
	return r
}

func orNone(s string) string {
	if s == "" {
		return "(no summary)"
	}
	return s
}

func taskText(e *manifest.Entry) string {
	if e.Task == nil {
		return ""
	}
	return fmt.Sprint(*e.Task)
}

// minutes rounds a run's duration to whole minutes, nil when unknown.
func minutes(m RunMetrics) *int {
	if !m.DurationKnown {
		return nil
	}
	n := int(math.Round(m.Duration.Minutes()))
	return &n
}
