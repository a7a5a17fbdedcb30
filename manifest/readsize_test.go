package manifest

import (
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
)

// lyingLen is a reader whose Len says less than it holds, as a manifest
// appended to while it is read.
type lyingLen struct {
	io.Reader
	n int
}

func (l lyingLen) Len() int { return l.n }

// TestParseIsTheSameWhateverTheSizeHint: the batches of a read are sized by the
// stream's length when it is known (streamSize); what Parse makes does not
// depend on it: a known length, none, or one smaller than the stream (many
// short lines, blank lines, a long line, a torn tail).
func TestParseIsTheSameWhateverTheSizeHint(t *testing.T) {
	var many strings.Builder
	for i := 1; i <= 3000; i++ {
		fmt.Fprintf(&many, `{"seq": %d, "file": "%d-x.md", "role": "r", "phase": 1, "status": "dispatched"}`+"\n\n", i, i)
	}
	inputs := map[string]string{
		"empty":       "",
		"one":         `{"seq": 1, "file": "1-a.md", "role": "a", "phase": 1, "status": "dispatched"}` + "\n",
		"blank lines": strings.Repeat("\n", 5000) + `{"seq": 2, "file": "2-a.md", "role": "a", "phase": 1, "status": "completed"}` + "\n",
		"long line":   `{"seq": 3, "file": "3-a.md", "role": "` + strings.Repeat("x", MaxReadLineBytes+10) + `", "phase": 1}` + "\n" + `{"seq": 4, "file": "4-a.md", "role": "a", "phase": 1, "status": "dispatched"}`,
		"many":        many.String(),
	}
	for name, in := range inputs {
		want, werr := Parse(struct{ io.Reader }{strings.NewReader(in)}, "m")
		for _, r := range []io.Reader{strings.NewReader(in), lyingLen{strings.NewReader(in), 10}, lyingLen{strings.NewReader(in), 0}} {
			got, err := Parse(r, "m")
			if fmt.Sprint(err) != fmt.Sprint(werr) || !reflect.DeepEqual(got, want) {
				t.Errorf("%s: %T: the read differs with a size hint", name, r)
			}
		}
	}
}
