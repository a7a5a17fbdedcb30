package pipesim

import (
	"crypto/sha256"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// shadowIgnore is the .gitignore the checkpoint skill writes into the shadow dir.
const shadowIgnore = "node_modules/\n.env\n.env.*\n__pycache__/\n.git/\nvenv/\n.venv/\ndist/\nbuild/\n.next/\n*.pyc\n.DS_Store\n"

// writer applies runs' events to disk: the project repository, the shadow
// checkpoint repository, and each run's dispatch dir (kept in memory until the
// end, so a durable copy can be taken at any instant).
type writer struct {
	L          layout
	project    *objects
	shadow     *objects
	heads      map[string]plumbing.Hash
	files      map[string]map[string]string
	baseline   plumbing.Hash
	shadowHead plumbing.Hash
	rows       []string
	dirs       map[*run]map[string]string
	stale      map[string]string
}

func newWriter(L layout, branch string, baseAt time.Time) (*writer, error) {
	p, err := initGitDir(filepath.Join(L.project, ".git"), projectConfig, branch)
	if err != nil {
		return nil, err
	}
	s, err := initGitDir(L.shadow, shadowConfig(L.project), "master")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(L.shadow, ".gitignore"), []byte(shadowIgnore), 0o644); err != nil {
		return nil, err
	}
	w := &writer{L: L, project: p, shadow: s, heads: map[string]plumbing.Hash{}, files: map[string]map[string]string{}, dirs: map[*run]map[string]string{}}
	base := map[string]string{"README.md": "# billing\n", "billing/doc.go": "package billing\n"}
	tree, err := p.tree(base)
	if err != nil {
		return nil, err
	}
	h, err := p.commit(tree, plumbing.ZeroHash, "chore: initial commit\n", signature("Dana Developer", "dana@example.invalid", baseAt))
	if err != nil {
		return nil, err
	}
	w.baseline = h
	w.heads["main"], w.files["main"] = h, base
	p.setBranch("main", h)
	return w, nil
}

// branchOff makes branch start at main when it does not exist yet.
func (w *writer) branchOff(branch string) {
	if _, ok := w.files[branch]; !ok {
		w.files[branch] = maps.Clone(w.files["main"])
		w.heads[branch] = w.heads["main"]
	}
}

// apply writes the first crash events of u fully; the event at crash (if any)
// is the instant of the crash: a manifest line half written when torn, a
// dispatch file either written or not. staleAt >= 0 snapshots the dispatch dir
// before that event as the stale durable copy.
func (w *writer) apply(u *run, branch string, crash int, torn bool, staleAt int) error {
	w.branchOff(branch)
	dir := map[string]string{}
	w.dirs[u] = dir
	for i, e := range u.events[:crash] {
		if i == staleAt {
			w.stale = maps.Clone(dir)
		}
		if err := w.event(u, branch, dir, e); err != nil {
			return err
		}
	}
	if staleAt == crash {
		w.stale = maps.Clone(dir)
	}
	if crash < len(u.events) {
		e := u.events[crash]
		u.crashAt = e.At
		switch e.kind {
		case evBefore, evAfter:
			if torn {
				line := e.a.beforeLine
				if e.kind == evAfter {
					line = e.a.afterLine
				}
				dir["manifest.jsonl"] += line[:1+u.r.IntN(len(line)-2)]
				u.shapes["torn-tail"] = true
			}
		case evFile:
			if torn {
				dir[e.a.file] = e.a.body
				e.a.fileDone = true
				u.shapes["file-without-line"] = true
			}
		}
	} else if len(u.events) > 0 {
		u.crashAt = u.events[len(u.events)-1].At
	}
	w.project.setBranch(branch, w.heads[branch])
	return nil
}

func (w *writer) event(u *run, branch string, dir map[string]string, e *event) error {
	a := e.a
	switch e.kind {
	case evFile:
		dir[a.file] = a.body
		a.fileDone = true
	case evBefore:
		dir["manifest.jsonl"] += a.beforeLine
		a.beforeDone = true
	case evAfter:
		dir["manifest.jsonl"] += a.afterLine
		a.afterDone = true
	case evFragment:
		dir["manifest.jsonl"] += e.frag
	case evOutput:
		text := fmt.Sprintf("# %s findings (seq %d)\n\nNo blocking findings.\n", a.Role.Name, a.Seq)
		if a.EmptyOutput {
			text = ""
		}
		dir[fmt.Sprintf("%d-%s-output.md", a.Seq, a.Role.Name)] = text
	case evReceipt:
		phase := "null"
		if a.Phase != "" {
			phase = `"` + a.Phase + `"`
		}
		sum := sha256.Sum256([]byte(fmt.Sprintf("%s/%d", u.sid, a.Seq)))
		dir["receipt-ledger.jsonl"] += fmt.Sprintf(`{"dispatch_id":"%d-%s","phase":%s,"rcpt_sha256":"%x","verdict":"%s"}`+"\n", a.Seq, a.Role.Name, phase, sum, pick(u.r, []string{"PASS", "PASS", "FAIL"}))
	case evCommit:
		return w.commit(branch, e.c)
	case evCheckpoint:
		e.s.done = true
		if e.s.Skipped {
			return nil
		}
		return w.checkpoint(branch, e.s)
	}
	return nil
}

func (w *writer) commit(branch string, c *projCommit) error {
	files := w.files[branch]
	files[c.Path] += c.Content
	tree, err := w.project.tree(files)
	if err != nil {
		return err
	}
	h, err := w.project.commit(tree, w.heads[branch], c.Msg+"\n", signature("Claude", "noreply@anthropic.com", c.At))
	if err != nil {
		return err
	}
	w.heads[branch], c.Hash, c.done = h, h.String(), true
	return nil
}

// checkpoint is `git add -A && git commit -m "<reason> | <timestamp> | <source>"`
// in the shadow repository, and the row appended to checkpoint-manifest.md.
func (w *writer) checkpoint(branch string, s *slot) error {
	tree, err := w.shadow.tree(w.files[branch])
	if err != nil {
		return err
	}
	msg := fmt.Sprintf("%s | %s | %s\n", s.Reason, localStamp(s.At), s.Source)
	h, err := w.shadow.commit(tree, w.shadowHead, msg, signature("Dana Developer", "dana@example.invalid", s.At))
	if err != nil {
		return err
	}
	w.shadowHead, s.Hash = h, h.String()
	if !s.RowDropped {
		w.rows = append(w.rows, fmt.Sprintf("| %s | %s | %s | %s |\n", h.String()[:8], localStamp(s.At), s.Reason, s.Source))
	}
	w.shadow.setBranch("master", h)
	return nil
}

// finish leaves the project checked out on branch: its files, HEAD and index.
func (w *writer) finish(branch string) error {
	files := w.files[branch]
	made := map[string]bool{w.L.project: true}
	for p, c := range files {
		full := filepath.Join(w.L.project, filepath.FromSlash(p))
		if d := filepath.Dir(full); !made[d] {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return err
			}
			made[d] = true
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			return err
		}
	}
	return w.project.writeIndex(files, time.Now())
}

// writeCheckpointTable writes checkpoint-manifest.md: the newest 50 rows, or a
// table truncated to its newest rows, or none at all.
func (w *writer) writeCheckpointTable(r *rand.Rand) error {
	rows := w.rows
	if len(rows) > 50 {
		rows = rows[len(rows)-50:]
	}
	switch r.IntN(12) {
	case 0:
		return nil
	case 1:
		if len(rows) > 1 {
			rows = rows[len(rows)-1-r.IntN(len(rows)-1):]
		}
	}
	return os.WriteFile(filepath.Join(w.L.shadow, "checkpoint-manifest.md"), []byte(strings.Join(rows, "")), 0o644)
}
