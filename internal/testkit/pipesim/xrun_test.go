package pipesim

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestXScenarioDeterministic: a seed always makes the same scenario and the
// same reference tree and history, wherever it is written.
func TestXScenarioDeterministic(t *testing.T) {
	for _, seed := range []int64{1, 2, 7, 20} {
		a, _ := json.Marshal(NewXScenario(seed))
		b, _ := json.Marshal(NewXScenario(seed))
		if string(a) != string(b) {
			t.Fatalf("seed %d: two scenarios differ", seed)
		}
		var trees []map[string]string
		var hists [][]string
		for _, dir := range []string{"a", "longer-directory-name"} {
			s := NewXScenario(seed)
			L := newXLayout(filepath.Join(t.TempDir(), dir), s.Sid)
			events, err := s.xSetup(L)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range events {
				if err := s.xApply(L, e, 0); err != nil {
					t.Fatal(err)
				}
			}
			files, err := XFiles(L.project)
			if err != nil {
				t.Fatal(err)
			}
			hist, _, err := xHistory(L.project)
			if err != nil {
				t.Fatal(err)
			}
			trees, hists = append(trees, files), append(hists, hist)
		}
		if !reflect.DeepEqual(trees[0], trees[1]) || multisetDiff(hists[0], hists[1]) != "" {
			t.Fatalf("seed %d: the reference depends on where it is written", seed)
		}
		if len(hists[0]) < 2 {
			t.Fatalf("seed %d: the reference has no commits of the run", seed)
		}
	}
}

// TestXOracleCatchesBrokenResumes runs the driver with resumes that are wrong
// in known ways, written here without replay: the oracle must flag them.
func TestXOracleCatchesBrokenResumes(t *testing.T) {
	// a "resume" that declares everything recorded done and does nothing:
	// in-flight work is lost or its partial attempt left in place
	skipAll := func(c XCall) XReplayResult {
		var h handoff
		tmp := ""
		for _, e := range c.Env {
			if v, ok := cut(e, "TMPDIR="); ok {
				tmp = v
			}
		}
		matches, _ := filepath.Glob(filepath.Join(tmp, "crucible-dispatch-*", "manifest.jsonl"))
		h.Plan.NextSeq = 1
		for _, m := range matches {
			data, _ := os.ReadFile(m)
			for _, sm := range xSeqField.FindAllStringSubmatch(string(data), -1) {
				var n int
				_ = json.Unmarshal([]byte(sm[1]), &n)
				h.Plan.Skip = append(h.Plan.Skip, struct {
					Seq int `json:"seq"`
				}{n})
				h.Plan.NextSeq = max(h.Plan.NextSeq, n+1)
			}
		}
		out, _ := json.Marshal(map[string]any{"plan": h.Plan})
		return XReplayResult{Stdout: string(out)}
	}
	classes := map[string]int{}
	for seed := int64(1); seed <= 12; seed++ {
		res := XRunSeed(seed, filepath.Join(t.TempDir(), "run"), XOptions{Replay: skipAll, Agent: "false", MaxCrashes: 1})
		for _, f := range res.Findings {
			classes[f.Check+"/"+f.Class]++
		}
	}
	t.Logf("findings of a resume that skips everything: %v", classes)
	for _, want := range []string{"tree/unit-missing", "history/commits-differ", "output/output-missing"} {
		if classes[want] == 0 {
			t.Errorf("no seed of 12 flagged %s for a resume that skips everything: %v", want, classes)
		}
	}
}

func cut(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && s[:len(prefix)] == prefix {
		return s[len(prefix):], true
	}
	return "", false
}
