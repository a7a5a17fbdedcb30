package inproc

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/replaytool/replay/checkpoint"
	"github.com/replaytool/replay/internal/testkit/pipesim"
)

// restoreKill kills the session inside replay's checkpoint restore, through
// the restore's crash-point hook (resumeflow.Deps.Fault). The hook is called
// where the restore runs on one goroutine (the safety checkpoint saved; every
// file written), so the kill is deterministic: at XRestoreMidFiles the project
// is first put in the state a kill during the file changes leaves, from the
// files before the restore and after it (tear), then the session dies.
type restoreKill struct {
	pipesim.XRestoreKill
	project string
	die     func() error
	before  map[string]string // the project's files when the safety checkpoint was saved
	dead    bool
	err     error
}

func (k *restoreKill) fault(point, _ string) {
	if k.dead || k.err != nil {
		return
	}
	switch point {
	case checkpoint.FaultSafetySaved:
		if k.At == pipesim.XRestoreAfterSafety {
			k.kill()
			return
		}
		if k.At == pipesim.XRestoreMidFiles {
			k.before, k.err = pipesim.XFiles(k.project)
		}
	case checkpoint.FaultFilesWritten:
		if k.At == pipesim.XRestoreMidFiles {
			if k.err = k.tear(); k.err != nil {
				return
			}
		}
		if k.At != pipesim.XRestoreAfterSafety {
			k.kill()
		}
	}
}

func (k *restoreKill) kill() {
	k.dead = true
	if err := k.die(); err != nil {
		k.err = fmt.Errorf("killing the session in the restore: %w", err)
	}
}

// tear puts the project where a kill during the restore's file changes leaves
// it. The restore removes files first, then writes files: of those changes,
// removals in path order then writes in path order, the first File mod (n+1)
// are kept, the next one, a write, is torn at half its bytes when Tear, and
// the rest are undone (the file as it was before the restore).
func (k *restoreKill) tear() error {
	after, err := pipesim.XFiles(k.project)
	if err != nil {
		return err
	}
	var removed, written []string
	for p, c := range after {
		if old, ok := k.before[p]; !ok || old != c {
			written = append(written, p)
		}
	}
	for p := range k.before {
		if _, ok := after[p]; !ok {
			removed = append(removed, p)
		}
	}
	sort.Strings(removed)
	sort.Strings(written)
	changes := append(removed, written...)
	n := k.File % (len(changes) + 1)
	for i, p := range changes[n:] {
		full := filepath.Join(k.project, filepath.FromSlash(p))
		old, was := k.before[p]
		_, is := after[p]
		var err error
		switch {
		case i == 0 && k.Tear && is:
			err = os.WriteFile(full, []byte(after[p][:len(after[p])/2]), 0o644)
		case was:
			if err = os.MkdirAll(filepath.Dir(full), 0o755); err == nil {
				err = os.WriteFile(full, []byte(old), 0o644)
			}
		default:
			err = os.Remove(full)
		}
		if err != nil {
			return fmt.Errorf("tearing the restore at %s: %w", p, err)
		}
	}
	return nil
}
