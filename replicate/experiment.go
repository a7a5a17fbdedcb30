package replicate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/replaytool/replay/internal/runfile"
	"github.com/replaytool/replay/mutate"
)

// ExperimentID identifies the experiment r runs on the pipeline of original
// session: what it compares (the mutations' original names and replacement
// contents), with what (the agent, the check) and how (the metric, alpha,
// margin). Two runs with the same identity are one experiment: the later one
// continues the earlier (see Continue). --replicas, --jobs and the clock are
// not part of it.
func ExperimentID(r Request, session string) string {
	h := sha256.New()
	field := func(s string) { fmt.Fprintf(h, "%d:%s\x00", len(s), s) }
	field(session)
	if muts, err := mutate.Parse(r.AB.Mutations, r.AB.Cwd); err == nil {
		for _, m := range muts {
			field(m.Orig)
			field(string(m.Text))
		}
	} else {
		for _, m := range r.AB.Mutations {
			field(m)
		}
	}
	agentName := ""
	if r.AB.Agent != nil {
		agentName = r.AB.Agent.Name()
	}
	field(agentName)
	field(r.Check)
	field(r.Metric)
	field(strconv.FormatFloat(r.Rule.Alpha, 'g', -1, 64))
	field(strconv.FormatFloat(r.Rule.Margin, 'g', -1, 64))
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// Continue finds the experiment r would run in the pipeline's log
// (replay-ab-replicas.jsonl): the last result with r's identity. When there is
// one, r.Prior is set to its replicas, so Run extends it instead of starting
// again, and the number of replicas per arm it had is returned; 0 when there is
// none. A log line that is not a result (an infrastructure error, a line cut
// short) is passed over.
func Continue(r *Request) (int, error) { return continueWhere(r, 0) }

// ContinueAt is Continue for a caller that knows how far the experiment went:
// the last result of r's identity with exactly perArm replicas per arm (a corpus
// extends each pipeline from the replicas its own log recorded, whatever other
// runs of the same experiment the pipeline saw since). It returns perArm when
// there is one, 0 when there is none.
func ContinueAt(r *Request, perArm int) (int, error) {
	if perArm < 1 {
		return 0, errkindNothing("ContinueAt: %d replicas per arm; give 1 or more", perArm)
	}
	return continueWhere(r, perArm)
}

// continueWhere sets r.Prior to the replicas of the last result of r's identity
// with perArm replicas per arm (any number when 0).
func continueWhere(r *Request, perArm int) (int, error) {
	if err := r.validate(); err != nil {
		return 0, err
	}
	pl, err := r.AB.Reload()
	if err != nil {
		return 0, err
	}
	id := ExperimentID(*r, pl.Location.SessionID)
	path := filepath.Join(pl.DispatchDir, JSONLFile)
	data, err := runfile.ReadFile(path, resultFile)
	if os.IsNotExist(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var found *Result
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		if !bytes.Contains(line, []byte(id)) {
			continue
		}
		var res Result
		if json.Unmarshal(line, &res) == nil && res.Experiment == id && len(res.Replicas) > 0 &&
			(perArm == 0 || len(res.Replicas) == 2*perArm) {
			found = &res
		}
	}
	if found == nil {
		return 0, nil
	}
	sortReplicas(found.Replicas)
	r.Prior = found.Replicas
	return len(found.Replicas) / 2, nil
}
