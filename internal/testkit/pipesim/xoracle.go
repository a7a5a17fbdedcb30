package pipesim

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/go-git/go-billy/v5/osfs"
)

// The oracle: the end state after the last resume and continuation against
// the reference, with no rule of the product's policy in it. Where the spec
// leaves a choice (which boundary, restore or not, live order of a wave) any
// choice that reaches the reference passes.

// xJudge compares the run at L with the reference tree and history, and checks
// the bookkeeping against what was on disk at each crash.
func (s *XScenario) xJudge(L xLayout, refFiles map[string]string, refHist []string, snaps []crashSnap) []XFinding {
	var out []XFinding
	add := func(check, class, format string, args ...any) {
		out = append(out, XFinding{Check: check, Class: class, Detail: fmt.Sprintf(format, args...)})
	}
	files, err := XFiles(L.project)
	if err != nil {
		add("tree", "unreadable", "%v", err)
		return out
	}
	// 1. the tree equals the reference (the user's own notes aside: they are
	// judged by the user-file check)
	for _, p := range sortedKeys(files) {
		if strings.HasPrefix(p, "notes/") {
			continue
		}
		want, ok := refFiles[p]
		got := files[p]
		switch {
		case !ok && strings.HasSuffix(p, ".partial"):
			add("tree", "partial-attempt-left", "%s", p)
		case !ok:
			add("tree", "extra-file", "%s", p)
		case got == want:
		case strings.Count(got, "\n") > strings.Count(want, "\n"):
			add("tree", "unit-done-twice", "%s has %d lines, the reference 1", p, strings.Count(got, "\n"))
		case strings.Count(got, "\n") == strings.Count(want, "\n") && (strings.Contains(p, "units/") || strings.Contains(p, xSecondDir+"/")):
			add("tree", "unit-on-wrong-base", "%s: %q, reference %q", p, strings.TrimSpace(got), strings.TrimSpace(want))
		default:
			add("tree", "content-differs", "%s", p)
		}
	}
	for _, p := range sortedKeys(refFiles) {
		if _, ok := files[p]; !ok {
			add("tree", "unit-missing", "%s", p)
		}
	}
	// 2. the history: every unit's commit once, on the run's branch
	hist, branch, err := xHistory(L.project)
	if err != nil {
		add("history", "unreadable", "%v", err)
	} else {
		if branch != s.Branch {
			add("history", "branch-changed", "on %s, the run's branch is %s", branch, s.Branch)
		}
		if d := multisetDiff(hist, refHist); d != "" {
			add("history", "commits-differ", "%s", d)
		}
	}
	s.xJudgeOutputs(L, add)
	// 4. original manifest lines kept byte for byte where they were; torn
	// fragments kept (in place or in a file beside the manifest)
	for k, sn := range snaps {
		for path, before := range sn.manifests {
			data, err := os.ReadFile(path)
			if err != nil {
				add("manifest", "manifest-gone", "%s after crash %d", path, k+1)
				continue
			}
			whole := before[:strings.LastIndexByte(before, '\n')+1]
			if !strings.HasPrefix(string(data), whole) {
				add("manifest", "original-line-changed", "%s: the lines of crash %d are not a prefix of the final manifest", filepath.Base(path), k+1)
			}
			if frag := before[len(whole):]; frag != "" && !xKeptBeside(path, frag) {
				add("manifest", "torn-fragment-lost", "%s: %q", filepath.Base(path), frag)
			}
		}
	}
	s.xJudgeSeqs(L, add)
	// 6. every file the user had at each crash is in the final tree or in a
	// tree a ref or checkpoint keeps
	var saved map[string]map[string]bool
	for k, sn := range snaps {
		for _, p := range sortedKeys(sn.files) {
			if files[p] == sn.files[p] {
				continue
			}
			if saved == nil {
				saved = xSavedTrees(L.project, L.shadow)
			}
			if !saved[p][sn.files[p]] {
				add("user-file", "file-lost", "%s as it was at crash %d", p, k+1)
			}
		}
	}
	if d := s.Second; d != nil {
		// the second session's own bookkeeping (its tree and history are
		// the project's, judged above)
		L2 := s.xSecondLayout(L)
		d.xJudgeOutputs(L2, add)
		d.xJudgeSeqs(L2, add)
	}
	return out
}

// xJudgeOutputs is the oracle's check 3 for s's session at L.
func (s *XScenario) xJudgeOutputs(L xLayout, add func(check, class, format string, args ...any)) {
	// 3. every output unit's output is there, whole (each dir listed once)
	var outputs []string
	for _, dir := range []string{L.dd, filepath.Join(L.scratch, "crucible-dispatch-"+s.Sid)} {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), "-output.md") {
				outputs = append(outputs, filepath.Join(dir, e.Name()))
			}
		}
	}
	// each output file read once: the units of a role look at the same files
	read := map[string][]byte{} // path -> content; nil when unreadable
	readOnce := func(p string) ([]byte, bool) {
		data, ok := read[p]
		if !ok {
			data, _ = xReadFile(p)
			read[p] = data
		}
		return data, data != nil
	}
	for i := range s.Units {
		u := &s.Units[i]
		if u.Class != Output {
			continue
		}
		found := false
		for _, o := range outputs {
			if strings.HasSuffix(filepath.Base(o), "-"+u.Role+"-output.md") {
				if data, ok := readOnce(o); ok && XOutputComplete(data) && strings.Contains(string(data), " output for "+u.ID+"\n") {
					found = true
				}
			}
		}
		if !found {
			add("output", "output-missing", "%s (%s)", u.ID, u.Role)
		}
	}
}

// xJudgeSeqs is the oracle's check 5 for s's session at L.
func (s *XScenario) xJudgeSeqs(L xLayout, add func(check, class, format string, args ...any)) {
	// 5. seqs never reused; replay_of chains lead to originals
	lines := s.xReadAll(L)
	files2 := map[int]map[string]bool{}
	bySeq := map[int]xLineRec{}
	for _, l := range lines {
		if files2[l.Seq] == nil {
			files2[l.Seq] = map[string]bool{}
		}
		files2[l.Seq][l.File+"|"+l.Role] = true
		if _, ok := bySeq[l.Seq]; !ok || l.ReplayOf == nil {
			bySeq[l.Seq] = l
		}
	}
	for seq, fs := range files2 {
		if len(fs) > 1 {
			add("seq", "seq-reused", "seq %d names %s", seq, strings.Join(sortedKeys(fs), ", "))
		}
	}
	for _, l := range lines {
		seq, steps := l.Seq, 0
		for cur := l; cur.ReplayOf != nil; steps++ {
			next, ok := bySeq[*cur.ReplayOf]
			if !ok && steps < 50 && xHasDispatchFile(L, s.Sid, *cur.ReplayOf, l.Role) {
				break // an original known by its dispatch file alone (the crash came before its line)
			}
			if !ok || steps > 50 || *cur.ReplayOf == cur.Seq {
				add("replay_of", "chain-broken", "seq %d: replay_of %d is no dispatch of the run", seq, *cur.ReplayOf)
				break
			}
			if next.Role != l.Role {
				add("replay_of", "chain-other-work", "seq %d (%s) replays seq %d (%s)", seq, l.Role, next.Seq, next.Role)
				break
			}
			cur = next
		}
	}
}

// xHasDispatchFile says whether seq's dispatch file for role is in the live
// dir or the scratch copy.
func xHasDispatchFile(L xLayout, sid string, seq int, role string) bool {
	for _, dir := range []string{L.dd, filepath.Join(L.scratch, "crucible-dispatch-"+sid)} {
		if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("%d-%s.md", seq, role))); err == nil {
			return true
		}
	}
	return false
}

// xKeptBeside says whether frag is in a file of the manifest's directory.
func xKeptBeside(manifest, frag string) bool {
	ents, err := os.ReadDir(filepath.Dir(manifest))
	if err != nil {
		return false
	}
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		if data, err := os.ReadFile(filepath.Join(filepath.Dir(manifest), e.Name())); err == nil && strings.Contains(string(data), frag) {
			return true
		}
	}
	return false
}

// multisetDiff names what got and want do not share, or "" when they are the
// same multiset.
func multisetDiff(got, want []string) string {
	count := map[string]int{}
	for _, g := range got {
		count[g]++
	}
	for _, w := range want {
		count[w]--
	}
	var extra, missing []string
	for k, n := range count {
		for ; n > 0; n-- {
			extra = append(extra, k)
		}
		for ; n < 0; n++ {
			missing = append(missing, k)
		}
	}
	sort.Strings(extra)
	sort.Strings(missing)
	if len(extra) == 0 && len(missing) == 0 {
		return ""
	}
	return fmt.Sprintf("extra %q, missing %q", extra, missing)
}

// xShadowLog is the subjects of every commit the shadow repository's refs reach.
type xShadowCommit struct {
	subject string
	at      time.Time
}

func xShadowLog(shadow string) ([]xShadowCommit, error) {
	r, err := git.Open(filesystem.NewStorage(osfs.New(shadow), cache.NewObjectLRUDefault()), nil)
	if err != nil {
		return nil, err
	}
	refs, err := r.References()
	if err != nil {
		return nil, err
	}
	var out []xShadowCommit
	seen := map[plumbing.Hash]bool{}
	err = refs.ForEach(func(ref *plumbing.Reference) error {
		if ref.Type() != plumbing.HashReference {
			return nil
		}
		stack := []plumbing.Hash{ref.Hash()}
		for len(stack) > 0 {
			h := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if seen[h] {
				continue
			}
			seen[h] = true
			c, err := r.CommitObject(h)
			if err != nil {
				continue
			}
			out = append(out, xShadowCommit{strings.SplitN(c.Message, "\n", 2)[0], c.Author.When})
			stack = append(stack, c.ParentHashes...)
		}
		return nil
	})
	return out, err
}
