package pipesim

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// The simulated agents. A unit's work is designed so that every wrong way of
// doing it shows in the tree:
//
//   - a mutating unit appends one line to units/<id>.txt and commits it: done
//     twice, the file has two lines;
//   - the line records the hash of every other group's files (its base): run
//     before the work it builds on, or on top of work it should not see (a
//     later wave left in place, a partial attempt), the line differs;
//   - an attempt first writes units/<id>.partial and removes it only once it
//     committed: a failed or interrupted attempt left in place leaves it;
//   - an output unit writes its output file beside its dispatch file, ending
//     with "END": a torn one lacks it.

// XAgentSteps is how many steps an attempt of u takes (each one a crash point).
func XAgentSteps(u *XUnit, fail bool) int {
	switch {
	case u.Class == Conversation:
		return 0
	case fail:
		return 1 // the partial file (mutating) or nothing written (output)
	case u.Class == Mutating:
		return 4
	}
	return 1
}

// XAgent performs steps first..steps of an attempt of u on dispatch seq
// (every step from first when steps < 0); frac in (0,1) tears the next write
// step at that fraction of its bytes (a crash during the write). fail makes
// the attempt one that fails after its partial file.
func XAgent(project, dispatchDir string, u *XUnit, seq int, at time.Time, fail bool, first, steps int, frac float64) error {
	n := XAgentSteps(u, fail)
	if steps < 0 || steps > n {
		steps = n
	}
	partial := filepath.Join(project, u.workDir(), u.ID+".partial")
	work := filepath.Join(project, u.workDir(), u.ID+".txt")
	write := func(path, text string, appendTo bool, cut float64) error {
		if cut > 0 {
			text = text[:int(float64(len(text))*cut)]
		}
		return xInDir(path, func() error {
			if appendTo {
				return xAppendFile(path, []byte(text), 0o644)
			}
			return xWriteFile(path, []byte(text), 0o644)
		})
	}
	for step := max(first, 1); step <= n; step++ {
		cut := 0.0
		if step > steps {
			if frac <= 0 || step != steps+1 {
				return nil
			}
			cut = frac
		}
		var err error
		switch {
		case u.Class == Output && !fail:
			err = write(filepath.Join(dispatchDir, fmt.Sprintf("%d-%s-output.md", seq, u.Role)),
				fmt.Sprintf("# %s output for %s\n\nverdict: PASS\n%s\nEND\n", u.Role, u.ID, u.Desc), false, cut)
		case u.Class == Output: // a failed output attempt writes nothing
		case step == 1:
			err = write(partial, fmt.Sprintf("partial attempt of %s (seq %d)\n", u.ID, seq), true, cut)
		case step == 2:
			base, berr := xBase(project, u.workDir(), u.Group)
			if berr != nil {
				return berr
			}
			err = write(work, fmt.Sprintf("%s done by %s, base %s\n", u.ID, u.Role, base), true, cut)
		case step == 3 && cut == 0:
			err = xCommit(project, u.workDir()+"/"+u.ID+".txt", XCommitMsg(u), at)
		case step == 4 && cut == 0:
			if err = os.Remove(partial); os.IsNotExist(err) {
				err = nil
			}
		}
		if err != nil || cut > 0 {
			return err
		}
	}
	return nil
}

// XCommitMsg is the message of u's commit: its task number for most tasks, the
// words of its task only for some (real messages rarely name the number).
func XCommitMsg(u *XUnit) string {
	if u.Task == 0 {
		return fmt.Sprintf("docs(%s): %s", u.Role, strings.ToLower(strings.TrimSuffix(u.Desc, ".")))
	}
	words := strings.Fields(strings.TrimSuffix(strings.SplitN(u.Desc, ": ", 2)[1], "."))
	if u.Task%3 == 0 {
		return "feat: " + strings.ToLower(strings.Join(words, " "))
	}
	return fmt.Sprintf("feat: task %d %s", u.Task, strings.ToLower(strings.Join(words[min(len(words), 2):], " ")))
}

// xBase hashes every file under dir (units/) that another group wrote.
func xBase(project, dir string, group int) (string, error) {
	ents, err := os.ReadDir(filepath.Join(project, dir))
	if err != nil && !os.IsNotExist(err) {
		return "", err
	}
	own := fmt.Sprintf("g%02d-", group)
	var names []string
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), own) {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		data, err := xReadFile(filepath.Join(project, dir, n))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\x00%d\x00%s", n, len(data), data)
	}
	return hex.EncodeToString(h.Sum(nil))[:12], nil
}

// XUnitForPrompt is the unit a dispatch of role, phase and task whose prompt
// is body asks for, as the simulated agent reads it: the unit whose
// instructions the prompt carries, or, for a prompt a resume rebuilt from the
// role's template (a dispatch file that was gone), the one unit of that role,
// phase and task. An error when the prompt cannot tell: torn before the
// instructions, or rebuilt for task-less work several units share.
func (s *XScenario) XUnitForPrompt(role, phase string, task int, body string) (*XUnit, error) {
	u := s.UnitOf(role, phase, task, body)
	rebuilt := strings.Contains(body, "Regenerated by replay from the manifest")
	switch {
	case u == nil && rebuilt:
		return nil, fmt.Errorf("the rebuilt prompt names role %q phase %q task %d, which several units share: it cannot tell which", role, phase, task)
	case u == nil:
		return nil, fmt.Errorf("no unit of the scenario is role %q phase %q task %d", role, phase, task)
	case !strings.Contains(body, u.Desc) && !rebuilt:
		// an agent does what its prompt says: a dispatch file without the
		// unit's instructions (torn by a crash) cannot be done
		return nil, fmt.Errorf("the dispatch file does not carry the instructions of %s (%q)", u.ID, u.Desc)
	}
	return u, nil
}

// XOutputComplete says whether an output file is a whole one.
func XOutputComplete(data []byte) bool {
	return strings.HasSuffix(string(data), "\nEND\n")
}
