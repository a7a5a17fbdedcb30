package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/replaytool/replay/fork"
	"github.com/replaytool/replay/internal/runfile"
	"github.com/replaytool/replay/replicate"
)

// replicaArms reads the replicated A/B results logged in dispatchDir
// (replay-ab-replicas.jsonl) and returns, by session, what each replica was:
// "baseline replica 2/4". A missing or unreadable log gives none; a damaged line is
// skipped.
func replicaArms(dispatchDir string) map[string]string {
	data, err := runfile.ReadFile(filepath.Join(dispatchDir, replicate.JSONLFile), runfile.Manifest)
	if err != nil {
		return nil
	}
	arms := map[string]string{}
	for _, line := range bytes.Split(data, []byte("\n")) {
		var res struct {
			Replicas []struct {
				Arm     string `json:"arm"`
				Index   int    `json:"index"`
				Session string `json:"session"`
			} `json:"replicas"`
		}
		if json.Unmarshal(bytes.TrimSpace(line), &res) != nil {
			continue
		}
		per := map[string]int{}
		for _, r := range res.Replicas {
			per[r.Arm] = max(per[r.Arm], r.Index)
		}
		for _, r := range res.Replicas {
			arms[r.Session] = fmt.Sprintf("%s replica %d/%d", r.Arm, r.Index, per[r.Arm])
		}
	}
	return arms
}

// markReplicas adds to every node of the tree that is a replica of a replicated A/B
// replay a note naming its arm and number.
func markReplicas(n *fork.Node, arms map[string]string) {
	if arm, ok := arms[n.Session]; ok {
		n.Notes = append(n.Notes, arm)
	}
	for _, c := range n.Children {
		markReplicas(c, arms)
	}
}
