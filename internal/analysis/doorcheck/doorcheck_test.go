package doorcheck_test

import (
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/replaytool/replay/internal/analysis/doorcheck"
)

// The analyzer reports each door-bypassing call with the door to use instead,
// keeps a call whose //replay:door comment gives a reason, and reports one whose
// comment gives none; a method of os.Root and io.ReadAll of a non-file pass.
func TestAnalyzer(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), doorcheck.Analyzer, "product")
}
