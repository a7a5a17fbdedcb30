package store_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"sort"
	"sync"
	"testing"

	"github.com/replaytool/replay/internal/testkit/s3test"
	"github.com/replaytool/replay/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// opener returns a fresh, empty store for one subtest.
type opener func(t *testing.T) store.Backend

// s3Env is the environment an S3 store of server s is opened with: the
// server's credentials and nothing from the test process (HOME points at an
// empty temp dir, so no shared credentials file is read; no instance role).
func s3Env(t *testing.T, s *s3test.Server, extra ...string) func(string) string {
	env := map[string]string{"HOME": t.TempDir(), "AWS_EC2_METADATA_DISABLED": "true"}
	for _, kv := range append(s.Env(), extra...) {
		for i := 0; i < len(kv); i++ {
			if kv[i] == '=' {
				env[kv[:i]] = kv[i+1:]
				break
			}
		}
	}
	return func(k string) string { return env[k] }
}

func backends(t *testing.T) map[string]opener {
	srv := s3test.Start(t)
	var mu sync.Mutex
	n := 0
	return map[string]opener{
		"dir": func(t *testing.T) store.Backend {
			b, err := store.OpenEnv(context.Background(), t.TempDir(), os.Getenv)
			require.NoError(t, err)
			return b
		},
		"s3": func(t *testing.T) store.Backend {
			mu.Lock()
			n++
			bucket := fmt.Sprintf("bucket-%03d", n)
			mu.Unlock()
			srv.MakeBucket(t, bucket)
			b, err := store.OpenEnv(context.Background(), srv.URL(bucket, "team/runs"), s3Env(t, srv))
			require.NoError(t, err)
			return b
		},
	}
}

// TestBackendContract runs the same behaviour table on every backend.
func TestBackendContract(t *testing.T) {
	t.Parallel()
	cases := map[string]func(t *testing.T, b store.Backend){
		"put get has list": contractPutGet,
		"compare and swap": contractPutIf,
		"racing creators":  contractRacingCreate,
		"racing updaters":  contractRacingUpdate,
		"bad keys":         contractBadKeys,
		"large object":     contractLarge,
	}
	for bname, open := range backends(t) {
		for cname, fn := range cases {
			t.Run(bname+"/"+cname, func(t *testing.T) {
				t.Parallel()
				fn(t, open(t))
			})
		}
	}
}

func contractPutGet(t *testing.T, b store.Backend) {
	ctx := context.Background()
	require.NoError(t, b.Put(ctx, "blobs/sha256/aa", []byte("A")))
	require.NoError(t, b.Put(ctx, "blobs/sha256/bb", []byte("")))
	require.NoError(t, b.Put(ctx, "runs/x/index.json", []byte("{}")))
	require.NoError(t, b.Put(ctx, "blobs/sha256/aa", []byte("A"))) // idempotent
	data, ver, err := b.Get(ctx, "blobs/sha256/aa", store.MaxObject)
	require.NoError(t, err)
	assert.Equal(t, "A", string(data))
	assert.NotEmpty(t, ver)
	data, _, err = b.Get(ctx, "blobs/sha256/bb", store.MaxObject)
	require.NoError(t, err)
	assert.Empty(t, data)
	_, _, err = b.Get(ctx, "blobs/none", store.MaxObject)
	assert.ErrorIs(t, err, store.ErrNotFound)
	ok, err := b.Has(ctx, "runs/x/index.json")
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = b.Has(ctx, "runs/y/index.json")
	require.NoError(t, err)
	assert.False(t, ok)
	keys, err := b.List(ctx, "blobs/")
	require.NoError(t, err)
	assert.Equal(t, []string{"blobs/sha256/aa", "blobs/sha256/bb"}, keys)
	keys, err = b.List(ctx, "")
	require.NoError(t, err)
	assert.Equal(t, []string{"blobs/sha256/aa", "blobs/sha256/bb", "runs/x/index.json"}, keys)
	keys, err = b.List(ctx, "runs/x/ind")
	require.NoError(t, err)
	assert.Equal(t, []string{"runs/x/index.json"}, keys)
	keys, err = b.List(ctx, "nothing/")
	require.NoError(t, err)
	assert.Empty(t, keys)
	assert.NotContains(t, b.String(), s3test.SecretKey)
}

func contractPutIf(t *testing.T, b store.Backend) {
	ctx := context.Background()
	v1, err := b.PutIf(ctx, "idx", []byte("1"), "")
	require.NoError(t, err)
	_, err = b.PutIf(ctx, "idx", []byte("x"), "")
	assert.ErrorIs(t, err, store.ErrConflict)
	v2, err := b.PutIf(ctx, "idx", []byte("2"), v1)
	require.NoError(t, err)
	assert.NotEqual(t, v1, v2)
	_, err = b.PutIf(ctx, "idx", []byte("3"), v1)
	assert.ErrorIs(t, err, store.ErrConflict)
	data, ver, err := b.Get(ctx, "idx", store.MaxObject)
	require.NoError(t, err)
	assert.Equal(t, "2", string(data))
	assert.Equal(t, v2, ver, "the version PutIf returns is the one Get returns")
	_, err = b.PutIf(ctx, "missing", []byte("x"), v2)
	assert.Error(t, err, "a PutIf on a version of an absent key must fail")
}

// contractRacingCreate: of several goroutines creating one key, exactly one wins.
func contractRacingCreate(t *testing.T, b store.Backend) {
	ctx := context.Background()
	const n = 6
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = b.PutIf(ctx, "runs/r/index.json", fmt.Appendf(nil, "writer %d", i), "")
		}()
	}
	wg.Wait()
	wins := 0
	for _, err := range errs {
		if err == nil {
			wins++
			continue
		}
		assert.ErrorIs(t, err, store.ErrConflict)
	}
	assert.Equal(t, 1, wins)
}

// contractRacingUpdate: concurrent read-modify-write loops lose no update.
func contractRacingUpdate(t *testing.T, b store.Backend) {
	ctx := context.Background()
	_, err := b.PutIf(ctx, "idx", []byte("0"), "")
	require.NoError(t, err)
	const n = 6
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for attempt := 0; attempt < 200; attempt++ {
				data, ver, err := b.Get(ctx, "idx", store.MaxObject)
				if !assert.NoError(t, err) {
					return
				}
				_, err = b.PutIf(ctx, "idx", fmt.Appendf(data, ",%d", i), ver)
				if err == nil {
					return
				}
				if !assert.ErrorIs(t, err, store.ErrConflict) {
					return
				}
			}
			t.Errorf("writer %d never won", i)
		}()
	}
	wg.Wait()
	data, _, err := b.Get(ctx, "idx", store.MaxObject)
	require.NoError(t, err)
	parts := splitComma(string(data))
	sort.Strings(parts)
	assert.Equal(t, []string{"0", "0", "1", "2", "3", "4", "5"}[1:], parts[1:], "every writer's update is there once")
}

func splitComma(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ',' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return out
}

func contractBadKeys(t *testing.T, b store.Backend) {
	ctx := context.Background()
	for _, k := range []string{"", "/etc/passwd", "../x", "a/../../x", "a//b", ".locks/x", "a/.tmp-1", "a\\b"} {
		assert.ErrorIs(t, b.Put(ctx, k, []byte("x")), store.ErrBadURL, k)
		_, err := b.PutIf(ctx, k, []byte("x"), "")
		assert.ErrorIs(t, err, store.ErrBadURL, k)
		_, _, err = b.Get(ctx, k, store.MaxObject)
		assert.ErrorIs(t, err, store.ErrBadURL, k)
	}
}

// contractLarge: an object above the S3 client's multipart threshold (16 MiB)
// arrives whole, as a checkpoints' bundle of a big project would.
func contractLarge(t *testing.T, b store.Backend) {
	ctx := context.Background()
	data := make([]byte, 17<<20)
	for i := range data {
		data[i] = byte(i * 7 % 251)
	}
	require.NoError(t, b.Put(ctx, "blobs/sha256/big", data))
	got, _, err := b.Get(ctx, "blobs/sha256/big", store.MaxObject)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(data, got), "the large object differs")
}
