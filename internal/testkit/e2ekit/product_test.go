package e2ekit_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoProductImportsTestkit: the binary is built from no package of the test
// harness tree (internal/testkit/...).
func TestNoProductImportsTestkit(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/replaytool/replay/cmd/replay").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 20 {
		t.Fatalf("go list -deps found %d packages: %q", len(deps), deps)
	}
	for _, p := range deps {
		if strings.Contains(p, "/internal/testkit") {
			t.Errorf("the replay binary is built from %s: the test harness must stay out of the product", p)
		}
	}
}
