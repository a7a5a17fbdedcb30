package report

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReuseScoreFirstLineAgreesInNumber(t *testing.T) {
	cases := []struct {
		served, total int
		verb, want    string
	}{
		{0, 1, "would be", "0 of 1 dispatch would be served from recordings: 0% (--reuse exact)."},
		{1, 1, "were", "1 of 1 dispatch was served from recordings: 100% (--reuse exact)."},
		{2, 3, "were", "2 of 3 dispatches were served from recordings: 66% (--reuse exact)."},
		{0, 0, "would be", "0 of 0 dispatches would be served from recordings: 0% (--reuse exact)."},
	}
	for _, c := range cases {
		var b strings.Builder
		reuseSection(&b, &ReuseScore{Mode: "exact", Served: c.served, Total: c.total}, c.verb)
		lines := strings.Split(b.String(), "\n")
		require.Greater(t, len(lines), 2, b.String())
		assert.Equal(t, c.want, lines[2])
	}
}
