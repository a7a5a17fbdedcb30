package checkpoint

import (
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// FuzzSafetyTrailers feeds arbitrary checkpoint messages (a shadow repository is a
// run's file, so untrusted) to the trailer parser: it never panics, a branch it
// accepts is HEAD or a valid refs/heads/ name, and an index it accepts is a parent
// after the first.
func FuzzSafetyTrailers(f *testing.F) {
	idx := plumbing.NewHash("0123456789abcdef0123456789abcdef01234567")
	f.Add("pre-restore-safety | 2026-04-07T15:00:00Z | replay\n\nProject-Head: 89abcdef0123456789abcdef0123456789abcdef\nProject-Branch: refs/heads/feat/login\nProject-Index: 0123456789abcdef0123456789abcdef01234567\n", true)
	f.Add("x\n\nProject-Branch: HEAD\n", false)
	f.Add("x\n\nproject-branch: refs/heads/../../etc\nPROJECT-INDEX: zz\n", true)
	f.Add("", false)
	f.Fuzz(func(t *testing.T, msg string, withIndex bool) {
		parents := []plumbing.Hash{plumbing.NewHash("89abcdef0123456789abcdef0123456789abcdef")}
		if withIndex {
			parents = append(parents, idx)
		}
		rec := parseSafetyRecord(msg, parents)
		if rec.branch != "" && rec.branch != "HEAD" {
			name := plumbing.ReferenceName(rec.branch)
			if !strings.HasPrefix(rec.branch, "refs/heads/") || name.Validate() != nil {
				t.Fatalf("accepted the branch %q", rec.branch)
			}
		}
		if !rec.index.IsZero() && (!withIndex || rec.index != idx) {
			t.Fatalf("accepted the index %s with parents %v", rec.index, parents)
		}
	})
}
