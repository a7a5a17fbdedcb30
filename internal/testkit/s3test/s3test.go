// Package s3test starts a real S3 server for tests: versitygw at a pinned
// version, built once per machine with `go install`, serving a temp directory
// on 127.0.0.1. Tests skip with a clear message when it cannot be built,
// unless REPLAY_REQUIRE_S3 is set (CI sets it), where that is a failure.
package s3test

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/replaytool/replay/internal/platform"
	"github.com/replaytool/replay/internal/testkit/testtools"
)

// Module is the server built for the tests, at a pinned version.
const Module = "github.com/versity/versitygw/cmd/versitygw@v1.8.0"

// Credentials of the server's root account.
const (
	AccessKey = "replaytestkey"
	SecretKey = "replaytestsecret0123456789"
	Region    = "us-east-1"
)

// Server is a running S3 server.
type Server struct {
	// Endpoint is host:port, plain HTTP on loopback.
	Endpoint string
	// Root is the directory it serves: each folder is a bucket.
	Root string
}

// URL returns the store URL of bucket/prefix on this server in replay's
// s3:// form (endpoint and plain HTTP in the query).
func (s *Server) URL(bucket, prefix string) string {
	u := "s3://" + bucket
	if prefix != "" {
		u += "/" + prefix
	}
	return u + "?endpoint=" + s.Endpoint + "&insecure=1"
}

// Env returns the standard AWS environment variables that give the root
// account's credentials, for a replay process started by a test.
func (s *Server) Env() []string {
	return []string{
		"AWS_ACCESS_KEY_ID=" + AccessKey,
		"AWS_SECRET_ACCESS_KEY=" + SecretKey,
		"AWS_REGION=" + Region,
	}
}

// MakeBucket creates a bucket (the posix backend treats every top folder as one).
func (s *Server) MakeBucket(t testing.TB, name string) {
	t.Helper()
	if err := os.Mkdir(filepath.Join(s.Root, name), 0o755); err != nil {
		t.Fatalf("s3test: make bucket %s: %v", name, err)
	}
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// ToolDir is where the server binary is kept between runs (see testtools.Dir).
func ToolDir() (string, error) {
	return testtools.Dir("versitygw-v1.8.0")
}

// Binary returns the server binary, building it on first use (under a file
// lock, so parallel test processes build it once).
func Binary() (string, error) {
	buildOnce.Do(func() { binPath, buildErr = build() })
	return binPath, buildErr
}

func build() (string, error) {
	dir, err := ToolDir()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "versitygw")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if err := platform.Lock(lock); err != nil {
		return "", err
	}
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	cmd := exec.Command("go", "install", Module)
	cmd.Env = append(os.Environ(), "GOBIN="+dir, "CGO_ENABLED=0")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go install %s: %v\n%s", Module, err, out.String())
	}
	return bin, nil
}

// Start builds (once) and starts a server on a free loopback port serving a
// fresh temp directory; it is stopped when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := Binary()
	if err != nil {
		if os.Getenv("REPLAY_REQUIRE_S3") != "" {
			t.Fatalf("s3test: the S3 server could not be built and REPLAY_REQUIRE_S3 is set: %v", err)
		}
		t.Skipf("s3test: skipped, the S3 server (%s) could not be built: %v", Module, err)
	}
	root := t.TempDir()
	for attempt := 0; ; attempt++ {
		s, err := start(t, bin, root)
		if err == nil {
			return s
		}
		if attempt == 4 {
			t.Fatalf("s3test: %v", err)
		}
	}
}

func start(t testing.TB, bin, root string) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	var logs bytes.Buffer
	cmd := exec.Command(bin, "--port", addr, "posix", root)
	cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY="+AccessKey, "ROOT_SECRET_KEY="+SecretKey)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return nil, fmt.Errorf("the S3 server exited at start: %s", logs.String())
		default:
		}
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			c.Close()
			t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
			return &Server{Endpoint: addr, Root: root}, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = cmd.Process.Kill()
	<-exited
	return nil, fmt.Errorf("the S3 server did not listen on %s within 30 s: %s", addr, logs.String())
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
