package report

import (
	"fmt"
	"io"
)

// ExplainRow is one check that ran while deciding the resume point.
type ExplainRow struct {
	Boundary string `json:"boundary"`
	Seq      int    `json:"seq,omitempty"`
	Role     string `json:"role,omitempty"`
	Check    string `json:"check"`
	Verdict  string `json:"verdict"`
	Detail   string `json:"detail,omitempty"`
}

// WriteExplainAs renders the checks as a markdown section: the answer to "why
// does it resume there?", its table drawn in style.
func WriteExplainAs(w io.Writer, rows []ExplainRow, style TableStyle) error {
	if _, err := io.WriteString(w, "\n## Why it resumes there\n\n"); err != nil {
		return err
	}
	cells := make([][]string, 0, len(rows))
	for _, r := range rows {
		seq := ""
		if r.Seq > 0 {
			seq = fmt.Sprint(r.Seq)
		}
		cells = append(cells, []string{r.Boundary, seq, r.Role, r.Check, r.Verdict, style.Cell(r.Detail, 100)})
	}
	return tableOrNone(w, style, []string{"Boundary", "Seq", "Role", "Check", "Verdict", "Detail"}, cells)
}
