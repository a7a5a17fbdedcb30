// Package testtools says where tests keep the programs they build for
// themselves (the S3 server, the replay binary of the end-to-end tests) between
// runs: beside the Go build cache, so a warm machine does not build them again
// and a cleaned cache takes them along.
package testtools

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// Dir returns the folder kept for the tool name: <GOCACHE>/../replay-test-tools/<name>.
// It is not created.
func Dir(name string) (string, error) {
	out, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOCACHE: %w", err)
	}
	cache := strings.TrimSpace(string(out))
	if cache == "" || cache == "off" {
		return "", errors.New("no Go build cache to keep test tools beside")
	}
	return filepath.Join(filepath.Dir(cache), "replay-test-tools", name), nil
}
