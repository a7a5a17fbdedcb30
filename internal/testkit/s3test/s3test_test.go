package s3test_test

import (
	"net/http"
	"testing"

	"github.com/replaytool/replay/internal/testkit/s3test"
)

// TestServerStarts builds (once) and starts the server, and checks it answers
// S3 requests: an unsigned one is refused with 403, as a real S3 does.
func TestServerStarts(t *testing.T) {
	s := s3test.Start(t)
	s.MakeBucket(t, "bucket-one")
	resp, err := http.Get("http://" + s.Endpoint + "/bucket-one")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("unsigned request: got %d, want 403", resp.StatusCode)
	}
}
