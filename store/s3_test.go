package store_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/replaytool/replay/internal/testkit/s3test"
	"github.com/replaytool/replay/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

func TestS3OpenErrors(t *testing.T) {
	t.Parallel()
	srv := s3test.Start(t)
	srv.MakeBucket(t, "present")
	ctx := context.Background()
	cases := []struct {
		name string
		url  string
		env  func(string) string
		kind error
		says string
	}{
		{"unreachable endpoint", "s3://present?insecure=1&endpoint=" + closedPort(t), s3Env(t, srv), store.ErrUnreachable, "cannot reach"},
		{"wrong secret", srv.URL("present", ""), s3Env(t, srv, "AWS_SECRET_ACCESS_KEY=not-the-secret-xyz"), store.ErrUnreachable, "refused the credentials"},
		{"unknown key id", srv.URL("present", ""), s3Env(t, srv, "AWS_ACCESS_KEY_ID=nobody"), store.ErrUnreachable, "refused the credentials"},
		{"no credentials at all", srv.URL("present", ""), func(k string) string {
			return map[string]string{"HOME": t.TempDir(), "AWS_EC2_METADATA_DISABLED": "true"}[k]
		}, store.ErrUnreachable, "credentials"},
		{"missing bucket", srv.URL("absent", "p"), s3Env(t, srv), store.ErrNotFound, `bucket "absent" does not exist`},
		{"credentials in the URL", "s3://key:secret@present/p", s3Env(t, srv), store.ErrBadURL, "credentials do not go in the URL"},
		{"bad bucket name", "s3://UP_per/p", s3Env(t, srv), store.ErrBadURL, "bucket name"},
		{"climbing prefix", "s3://present/../x", s3Env(t, srv), store.ErrBadURL, "prefix"},
		{"unknown parameter", "s3://present/p?endpont=x", s3Env(t, srv), store.ErrBadURL, `unknown parameter "endpont"`},
		{"bad insecure", "s3://present/p?insecure=yes", s3Env(t, srv), store.ErrBadURL, "insecure=1"},
		{"endpoint with scheme", "s3://present/p?endpoint=http://h:1", s3Env(t, srv), store.ErrBadURL, "host:port"},
		{"bad env endpoint", "s3://present/p", s3Env(t, srv, "AWS_ENDPOINT_URL_S3=ftp://x"), store.ErrBadURL, "AWS_ENDPOINT_URL_S3"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			_, err := store.OpenEnv(ctx, c.url, c.env)
			require.Error(t, err)
			assert.ErrorIs(t, err, c.kind)
			msg := err.Error()
			assert.Contains(t, msg, c.says)
			assert.NotContains(t, msg, "\n", "one line")
			assert.NotContains(t, msg, s3test.SecretKey)
			assert.NotContains(t, msg, "not-the-secret-xyz")
			assert.Less(t, time.Since(start), time.Minute, "bounded")
		})
	}
}

// TestS3EndpointAndCredentialsFromTheChain: the endpoint from
// AWS_ENDPOINT_URL, the credentials from a shared credentials file profile.
func TestS3EndpointAndCredentialsFromTheChain(t *testing.T) {
	t.Parallel()
	srv := s3test.Start(t)
	srv.MakeBucket(t, "shared")
	home := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".aws"), 0o700))
	creds := "[default]\naws_access_key_id = wrong\naws_secret_access_key = wrong\n\n[team]\naws_access_key_id = " +
		s3test.AccessKey + "\naws_secret_access_key = " + s3test.SecretKey + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(home, ".aws", "credentials"), []byte(creds), 0o600))
	env := map[string]string{"HOME": home, "AWS_PROFILE": "team", "AWS_ENDPOINT_URL": "http://" + srv.Endpoint, "AWS_EC2_METADATA_DISABLED": "true"}
	getenv := func(k string) string { return env[k] }
	ctx := context.Background()
	b, err := store.OpenEnv(ctx, "s3://shared/a/b", getenv)
	require.NoError(t, err)
	require.NoError(t, b.Put(ctx, "k", []byte("v")))
	assert.Equal(t, "s3://shared/a/b", b.String())
	_, err = os.Stat(filepath.Join(srv.Root, "shared", "a", "b", "k"))
	assert.NoError(t, err, "the object is under the URL's prefix")

	// The explicit file wins over ~/.aws, and the default profile there is wrong.
	env["AWS_PROFILE"] = ""
	_, err = store.OpenEnv(ctx, "s3://shared/a/b", getenv)
	assert.ErrorIs(t, err, store.ErrUnreachable)
	// AWS_ENDPOINT_URL_S3 wins over AWS_ENDPOINT_URL; the environment's keys over the file.
	env["AWS_ENDPOINT_URL_S3"] = "http://" + closedPort(t)
	env["AWS_ACCESS_KEY_ID"], env["AWS_SECRET_ACCESS_KEY"] = s3test.AccessKey, s3test.SecretKey
	_, err = store.OpenEnv(ctx, "s3://shared/a/b", getenv)
	assert.ErrorIs(t, err, store.ErrUnreachable)
	assert.Contains(t, err.Error(), "cannot reach")
	delete(env, "AWS_ENDPOINT_URL_S3")
	_, err = store.OpenEnv(ctx, "s3://shared/a/b", getenv)
	assert.NoError(t, err)
}

// TestS3ObjectsOutsideThePrefixAreInvisible: List under a prefix sees only it.
func TestS3ObjectsOutsideThePrefixAreInvisible(t *testing.T) {
	t.Parallel()
	srv := s3test.Start(t)
	srv.MakeBucket(t, "pfx")
	ctx := context.Background()
	a, err := store.OpenEnv(ctx, srv.URL("pfx", "a"), s3Env(t, srv))
	require.NoError(t, err)
	ab, err := store.OpenEnv(ctx, srv.URL("pfx", "ab"), s3Env(t, srv))
	require.NoError(t, err)
	require.NoError(t, a.Put(ctx, "x", []byte("1")))
	require.NoError(t, ab.Put(ctx, "y", []byte("2")))
	keys, err := a.List(ctx, "")
	require.NoError(t, err)
	assert.Equal(t, []string{"x"}, keys)
	ok, err := ab.Has(ctx, "x")
	require.NoError(t, err)
	assert.False(t, ok)
	assert.False(t, strings.Contains(a.String(), "?"))
}

// TestS3SilentEndpointIsBounded: an endpoint that accepts connections and never
// answers ends in ErrUnreachable when the caller's deadline passes.
func TestS3SilentEndpointIsBounded(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	env := map[string]string{"AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s", "AWS_EC2_METADATA_DISABLED": "true"}
	_, err = store.OpenEnv(ctx, "s3://silent?insecure=1&endpoint="+l.Addr().String(), func(k string) string { return env[k] })
	require.Error(t, err)
	assert.ErrorIs(t, err, store.ErrUnreachable)
	assert.Contains(t, err.Error(), "did not answer in time")
}
