package pipesim

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
)

// The reference in memory. Only the reference's final project tree and the
// subjects of its branch are compared, and only the agent steps of mutating
// units write the project (xProjectEvent), so the reference is computed
// without a file system: the same steps as XAgent and xCommit do on disk,
// on a map of the project's files. TestXReferenceInMemory proves it equal to
// the reference written on disk, seed by seed.

// xRefTree is the project of the reference: its working files, the content
// of each file at the last commit that staged it, and the branch's subjects
// (oldest first).
type xRefTree struct {
	files     map[string]string
	committed map[string]string
	subjects  []string
}

// xReference is XRunSeed's reference: the final project tree (XFiles's form)
// and the first-parent subjects from the tip back to the root (xHistory's).
func (s *XScenario) xReference() (map[string]string, []string, error) {
	p := &xRefTree{files: map[string]string{}, committed: map[string]string{}}
	// xInitProject's commit
	for path, c := range map[string]string{"README.md": "# billing\n", "billing/doc.go": "package billing\n"} {
		p.files[path], p.committed[path] = c, c
	}
	p.subjects = append(p.subjects, "chore: initial commit")
	run := func(sc *XScenario, o *xOrch) error {
		o.events = append(o.events, xev{kind: xMarker, at: sc.Start})
		all := map[int]bool{}
		for i := range sc.Units {
			all[i] = true
		}
		o.groups(0, all)
		for _, e := range o.events {
			if !xProjectEvent(e) {
				continue
			}
			if err := p.step(e); err != nil {
				return err
			}
		}
		return nil
	}
	// as xSetupFor lays them out: the older run first, then this one
	if old := s.Older; old != nil {
		if err := run(old, &xOrch{s: old, r: rand.New(rand.NewPCG(uint64(s.Seed), 0x01d)), t: old.Start, nextSeq: 1}); err != nil {
			return nil, nil, err
		}
	}
	if sec := s.Second; sec != nil {
		// a second session's steps between this run's, by time (as
		// xSetupFor lays them out)
		for _, e := range xMergeEvents(s.xFirstOrch().events, sec.xFirstOrch().events) {
			if !xProjectEvent(e) {
				continue
			}
			if err := p.step(e); err != nil {
				return nil, nil, err
			}
		}
	} else if err := run(s, &xOrch{s: s, r: rand.New(rand.NewPCG(uint64(s.Seed), 0x0c4)), t: s.Start, nextSeq: 1}); err != nil {
		return nil, nil, err
	}
	hist := make([]string, len(p.subjects))
	for i, sub := range p.subjects {
		hist[len(hist)-1-i] = sub
	}
	return p.files, hist, nil
}

// step is XAgent(…, e.step, e.step, 0) of a mutating unit on the map: the one
// step e names.
func (p *xRefTree) step(e xev) error {
	u := e.u
	if e.step < 1 || e.step > XAgentSteps(u, e.fail) {
		return nil
	}
	partial := u.workDir() + "/" + u.ID + ".partial"
	work := u.workDir() + "/" + u.ID + ".txt"
	switch e.step {
	case 1:
		p.files[partial] += fmt.Sprintf("partial attempt of %s (seq %d)\n", u.ID, e.seq)
	case 2:
		p.files[work] += fmt.Sprintf("%s done by %s, base %s\n", u.ID, u.Role, p.base(u.workDir(), u.Group))
	case 3:
		// xCommit: the file staged, the whole index committed; one that
		// changes nothing is refused
		c, ok := p.files[work]
		if !ok {
			return fmt.Errorf("reference: %s: no such file", work)
		}
		if old, was := p.committed[work]; was && old == c {
			return errEmptyCommit
		}
		p.committed[work] = c
		p.subjects = append(p.subjects, strings.SplitN(XCommitMsg(u)+"\n", "\n", 2)[0])
	case 4:
		delete(p.files, partial)
	}
	return nil
}

// base is xBase on the map: the hash of every file under dir another group
// wrote.
func (p *xRefTree) base(dir string, group int) string {
	own := fmt.Sprintf("g%02d-", group)
	var names []string
	for path := range p.files {
		name, ok := strings.CutPrefix(path, dir+"/")
		if ok && !strings.Contains(name, "/") && !strings.HasPrefix(name, own) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		data := p.files[dir+"/"+n]
		fmt.Fprintf(h, "%s\x00%d\x00%s", n, len(data), data)
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}
