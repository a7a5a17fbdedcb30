package replicate

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/replaytool/replay/internal/errkind"
	"github.com/replaytool/replay/internal/safewrite"
	"github.com/replaytool/replay/manifest"
)

// ErrInfrastructure is the kind of the error for a replicated A/B replay whose
// replicas could not measure anything: an agent that cannot start (not found,
// not executable: the shell's exit 127 and 126), an arm whose agent printed
// nothing at all, an arm where no dispatch ran, a check that cannot run. Such a
// run is an error, not an outcome: no decision is made from it.
var ErrInfrastructure = errors.New("replicated A/B replay infrastructure failure")

// shellCannotRun are the shell's exit statuses for a command it could not run:
// 126 found but not executable, 127 not found.
var shellCannotRun = map[string]string{"126": "found but not executable", "127": "not found"}

// infrastructure returns an ErrInfrastructure error naming the cause when the
// replicas of res measured the infrastructure rather than the templates.
func infrastructure(res *Result) error {
	for _, arm := range []string{Baseline, Mutated} {
		ran, silent := 0, 0
		for _, rep := range res.Replicas {
			if rep.Arm != arm {
				continue
			}
			if rep.CheckExit != nil {
				if why, ok := shellCannotRun[fmt.Sprint(*rep.CheckExit)]; ok {
					return errkind.Errorf(ErrInfrastructure, "%s replica %d: the check %q cannot run (exit %d: command %s); no decision made: fix --check", arm, rep.Index, res.Check, *rep.CheckExit, why)
				}
			}
			for _, d := range rep.Dispatches {
				ran++
				if code, ok := strings.CutPrefix(d.Reason, "agent exited "); ok {
					code, _, _ = strings.Cut(code, ":")
					if why, ok := shellCannotRun[code]; ok {
						return errkind.Errorf(ErrInfrastructure, "%s replica %d, dispatch %d (%s): the agent cannot start (exit %s: command %s: %s); no decision made: give --agent a command that runs", arm, rep.Index, d.ReplayOf, d.Role, code, why, d.Reason)
					}
				}
				if d.OutputChars == 0 && d.Status != string(manifest.StatusCompleted) {
					silent++
				}
			}
		}
		switch {
		case ran == 0:
			return errkind.Errorf(ErrInfrastructure, "the %s arm ran no dispatch in any replica; no decision made: check the agent and the replay point", arm)
		case silent == ran:
			return errkind.Errorf(ErrInfrastructure, "every dispatch of the %s arm (%d) failed with no output at all: the agent does not run; no decision made: give --agent a command that runs", arm, ran)
		}
	}
	return nil
}

// Failure is the line appended to JSONLFile for a run that ended in an
// infrastructure failure: no decision, the cause, so that `replay gate` on the
// log fails instead of passing on an older result.
type Failure struct {
	Generated time.Time `json:"generated_at"`
	Session   string    `json:"original_session,omitempty"`
	// InfrastructureError is the cause.
	InfrastructureError string `json:"infrastructure_error"`
}

// WriteFailure appends the failure err to the log beside the manifest in dir.
func WriteFailure(dir, session string, now time.Time, err error) error {
	line, jerr := json.Marshal(Failure{Generated: now, Session: session, InfrastructureError: err.Error()})
	if jerr != nil {
		return jerr
	}
	return safewrite.AppendLine(filepath.Join(dir, JSONLFile), line)
}
