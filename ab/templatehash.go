package ab

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"

	"github.com/replaytool/replay/agent"
	"github.com/replaytool/replay/internal/runfile"
	"github.com/replaytool/replay/mutate"
	"github.com/replaytool/replay/pipeline"
)

// TemplateHash returns the hex sha256 of the template text dispatch d is built
// from in the experiment: the mutation's replacement, else the pinned template,
// else the current one in Templates; "" when none is known. It goes into the
// fingerprint of the dispatch's recording.
func (o Options) TemplateHash(d *pipeline.Dispatch) string {
	if m := mutate.For(o.Mutations, d.Template); m != nil {
		return hashHex(m.Text)
	}
	for _, dir := range []string{o.Pinned, o.Templates} {
		if dir == "" {
			continue
		}
		if path, err := mutate.FindTemplate(dir, d.Template); err == nil {
			if text, err := runfile.ReadFile(path, runfile.Template); err == nil {
				return hashHex(text)
			}
		}
	}
	return ""
}

func hashHex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// PlanStore is the store a plan forecasts an A/B replay's reuse from: the
// pipeline's recordings and every A/B session's, as Store searches them.
func PlanStore(pl *pipeline.Pipeline) *agent.Store {
	st := agent.OpenStore(pl.DispatchDir)
	if pl.ScratchDir == "" {
		return st
	}
	others, _ := filepath.Glob(filepath.Join(pl.ScratchDir, WorktreesDir, "*.ab"))
	return st.Also(others...)
}
