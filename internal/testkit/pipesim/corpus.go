package pipesim

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// CorpusCase is a simulator case's expect.json (testdata/simcorpus/<class>/):
// the fields of the corpus's expect.json that the truth knows, the seed whose
// run is generated at test time, and the class of failure it keeps.
type CorpusCase struct {
	Scenario string `json:"scenario"`
	// Class is the property and class the seed exposed ("work-items/item-twice").
	Class string `json:"class"`
	// Seed is the pipesim seed whose run the test generates.
	Seed int64    `json:"seed"`
	Dir  string   `json:"dir"`
	Args []string `json:"args"`
	Now  string   `json:"now"`
	Exit int      `json:"exit"`
	// ResumeCheckpoint is the reason of the truth's boundary ("" the start or
	// the end: no restore).
	ResumeCheckpoint string `json:"resume_checkpoint"`
	Skip             []int  `json:"skip"`
	// Redo holds, for each work item to redo, its latest seq.
	Redo    []int `json:"redo"`
	NextSeq int   `json:"next_seq"`
	// Execute says the test also executes the resume (for one-decision cases).
	Execute bool `json:"execute"`
}

// CorpusCase returns the expect.json of this truth's run.
func (t *Truth) CorpusCase(class, scenario string, execute bool) CorpusCase {
	c := CorpusCase{Scenario: scenario, Class: class, Seed: t.Seed, Dir: "project", Args: []string{},
		Now: t.Now.Format(time.RFC3339), NextSeq: t.NextSeq, Skip: append([]int{}, t.Skip...), Redo: t.RedoSeqs(), Execute: execute}
	if p := t.Position; p > 0 && p < t.End() && t.Boundaries[p].Exists { // a boundary with nothing to restore names no checkpoint
		c.ResumeCheckpoint = t.Boundaries[p].Name
	}
	return c
}

// RedoSeqs is, for each work item of Redo, its latest seq, ascending.
func (t *Truth) RedoSeqs() []int {
	latest := map[Item]int{}
	for s, st := range t.Seqs {
		if s > latest[st.Item] {
			latest[st.Item] = s
		}
	}
	out := []int{}
	for _, it := range t.Redo {
		out = append(out, latest[it])
	}
	sort.Ints(out)
	return out
}

// Mismatch lists how c's expected facts differ from t (a seed whose run the
// generator no longer makes the same way).
func (c CorpusCase) Mismatch(t *Truth) []string {
	want := t.CorpusCase(c.Class, c.Scenario, c.Execute)
	var bad []string
	if fmt.Sprint(want.Skip, want.Redo, want.NextSeq, want.ResumeCheckpoint, want.Now) != fmt.Sprint(c.Skip, c.Redo, c.NextSeq, c.ResumeCheckpoint, c.Now) {
		bad = append(bad, fmt.Sprintf("seed %d now generates skip %v redo %v next seq %d checkpoint %q now %s; expect.json says skip %v redo %v next seq %d checkpoint %q now %s",
			c.Seed, want.Skip, want.Redo, want.NextSeq, want.ResumeCheckpoint, want.Now, c.Skip, c.Redo, c.NextSeq, c.ResumeCheckpoint, c.Now))
	}
	return bad
}

// WriteCorpusCase writes c as dir/expect.json.
func WriteCorpusCase(dir string, c CorpusCase) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "expect.json"), append(data, '\n'), 0o644)
}
