package corpus

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/replicate"
	"github.com/replaytool/replay/store"
)

func TestParseShard(t *testing.T) {
	t.Parallel()
	for spec, want := range map[string]Shard{"1/1": {1, 1}, "3/4": {3, 4}, "4/4": {4, 4}, "10000/10000": {10000, 10000}} {
		got, err := ParseShard(spec)
		require.NoError(t, err, spec)
		assert.Equal(t, want, got)
		assert.Equal(t, spec, got.String())
	}
	for _, bad := range []string{"5/4", "0/3", "a/b", "1/0", "", "1/", "/3", " 1/2", "1/2/3", "-1/2", "1/10001", "1/ 2", "2"} {
		_, err := ParseShard(bad)
		require.ErrorIs(t, err, ErrBadOptions, "%q", bad)
		assert.NotContains(t, err.Error(), "\n")
		assert.Contains(t, err.Error(), "give K/N")
	}
}

func TestShardSliceCoversEveryPipelineOnce(t *testing.T) {
	t.Parallel()
	for total := 0; total <= 23; total++ {
		for n := 1; n <= 7; n++ {
			seen := make([]int, total)
			var sizes []int
			for k := 1; k <= n; k++ {
				sh, size := Shard{K: k, N: n}, 0
				for i := range total {
					if sh.Has(i) {
						seen[i]++
						size++
					}
				}
				assert.Equal(t, size, sh.Size(total), "%d pipelines, shard %s", total, sh)
				sizes = append(sizes, size)
			}
			for i, c := range seen {
				assert.Equal(t, 1, c, "pipeline %d of %d over %d shards", i, total, n)
			}
			assert.LessOrEqual(t, max(sizes[0], sizes[len(sizes)-1])-min(sizes[0], sizes[len(sizes)-1]), 1, "balanced")
		}
	}
}

// shardFixture is a corpus of five fake pipelines, its results, a directory
// store and the single-process run's result files.
type shardFixture struct {
	root    string
	st      *store.Dir
	results map[string]*replicate.Result
	single  map[string][]byte
	now     time.Time
}

func newShardFixture(t *testing.T) *shardFixture {
	t.Helper()
	root := corpusDirs(t, "e", "a", "d", "b", "c")
	fx := &shardFixture{root: root, now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), results: map[string]*replicate.Result{
		"a": fakeResult(3, 3, 3, 100, 50), "b": fakeResult(3, 2, 3, 10, 10), "d": fakeResult(3, 3, 3, 7, 9), "e": fakeResult(2, 3, 3, 5, 4)}}
	require.NoError(t, os.MkdirAll(filepath.Join(root, "store"), 0o755))
	var err error
	fx.st, err = store.OpenDir(filepath.Join(root, "store"))
	require.NoError(t, err)
	var calls []string
	r := request(root, &calls, fx.results)
	r.Now = fx.now
	_, err = Run(r)
	require.NoError(t, err)
	fx.single = map[string][]byte{}
	for _, f := range []string{JSONFile, MarkdownFile} {
		fx.single[f], err = os.ReadFile(filepath.Join(root, "out", f))
		require.NoError(t, err)
	}
	return fx
}

// shard runs shard k/n into the store with its own output directory.
func (fx *shardFixture) shard(t *testing.T, k, n int, calls *[]string) *ShardRun {
	t.Helper()
	r := request(fx.root, calls, fx.results)
	r.Out = fmt.Sprintf("out-%d-%d", k, n)
	r.Now = fx.now.Add(time.Duration(k) * time.Hour) // a shard's clock does not reach the report
	run, err := RunShard(r, Shard{K: k, N: n}, fx.st)
	require.NoError(t, err)
	return run
}

func (fx *shardFixture) merge(t *testing.T, m MergeRequest) (map[string][]byte, error) {
	t.Helper()
	m.Store, m.Now = fx.st, fx.now
	res, err := Merge(m)
	if err != nil {
		return nil, err
	}
	dir := t.TempDir()
	require.NoError(t, WriteResult(dir, res))
	assert.Empty(t, res.Files.Log)
	got := map[string][]byte{}
	for _, f := range []string{JSONFile, MarkdownFile} {
		got[f], err = os.ReadFile(filepath.Join(dir, f))
		require.NoError(t, err)
	}
	return got, nil
}

func TestShardsMergeToTheSingleRunBytes(t *testing.T) {
	t.Parallel()
	fx := newShardFixture(t)
	for _, n := range []int{1, 2, 3, 5, 7} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			fx := *fx
			require.NoError(t, os.MkdirAll(filepath.Join(fx.root, fmt.Sprint("store", n)), 0o755))
			st, err := store.OpenDir(filepath.Join(fx.root, fmt.Sprint("store", n)))
			require.NoError(t, err)
			fx.st = st
			var calls []string
			for k := n; k >= 1; k-- { // the order the shards finish in does not matter
				fx.shard(t, k, n, &calls)
			}
			assert.ElementsMatch(t, []string{"a", "b", "c", "d", "e"}, calls, "every pipeline runs exactly once over the shards")
			got, err := fx.merge(t, MergeRequest{})
			require.NoError(t, err)
			assert.Equal(t, string(fx.single[MarkdownFile]), string(got[MarkdownFile]))
			assert.Equal(t, string(fx.single[JSONFile]), string(got[JSONFile]))
		})
	}
}

func TestShardRerunReplacesOnlyItsOwn(t *testing.T) {
	t.Parallel()
	fx := newShardFixture(t)
	var calls []string
	first := fx.shard(t, 1, 2, &calls)
	second := fx.shard(t, 2, 2, &calls)
	before, _, err := fx.st.Get(context.Background(), second.Object, store.MaxObject)
	require.NoError(t, err)
	calls = nil
	again := fx.shard(t, 1, 2, &calls)
	assert.Empty(t, calls, "the shard's log skips its finished pipelines")
	assert.Equal(t, first.Object, again.Object)
	after, _, err := fx.st.Get(context.Background(), second.Object, store.MaxObject)
	require.NoError(t, err)
	assert.Equal(t, before, after, "another shard's object is untouched")
	keys, err := fx.st.List(context.Background(), "corpus/")
	require.NoError(t, err)
	assert.Len(t, keys, 2)
}

func TestMergeRefusesIncompleteMixedAndCorruptShards(t *testing.T) {
	t.Parallel()
	fx := newShardFixture(t)
	ctx := context.Background()
	var calls []string
	_, err := fx.merge(t, MergeRequest{})
	require.ErrorIs(t, err, ErrIncomplete, "an empty store")
	runs := []*ShardRun{fx.shard(t, 1, 3, &calls), nil, fx.shard(t, 3, 3, &calls)}
	_, err = fx.merge(t, MergeRequest{})
	require.ErrorIs(t, err, ErrIncomplete)
	assert.Contains(t, err.Error(), "shard 2 of 3 missing (present: 1, 3)")
	runs[1] = fx.shard(t, 2, 3, &calls)
	// Objects that are not shards of a run are left alone.
	for _, k := range []string{"corpus/not-a-key/shard-1-of-1.json", ShardPrefix(runs[0].Doc.Key) + "/notes.txt", ShardPrefix(runs[0].Doc.Key) + "/shard-01-of-3.json"} {
		require.NoError(t, fx.st.Put(ctx, k, []byte("\x1b[31mnot a shard")))
	}
	_, err = fx.merge(t, MergeRequest{})
	require.NoError(t, err)
	_, err = fx.merge(t, MergeRequest{Key: "ABC"})
	require.ErrorIs(t, err, ErrBadOptions)

	// The same run sharded two ways: refused until --shards picks one.
	fx.shard(t, 1, 1, &calls)
	_, err = fx.merge(t, MergeRequest{})
	require.ErrorIs(t, err, ErrShardMismatch)
	assert.Contains(t, err.Error(), "N=1 (shards 1), N=3 (shards 1, 2, 3)")
	for _, n := range []int{1, 3} {
		got, err := fx.merge(t, MergeRequest{Shards: n})
		require.NoError(t, err)
		assert.Equal(t, fx.single[MarkdownFile], got[MarkdownFile])
	}

	// A shard run with another spelling of the same mutation.
	good, _, err := fx.st.Get(ctx, runs[1].Object, store.MaxObject)
	require.NoError(t, err)
	doc, err := DecodeShard("x", good)
	require.NoError(t, err)
	doc.Settings.Mutations = []string{"./a.md=b.md"}
	data, err := doc.Encode()
	require.NoError(t, err)
	require.NoError(t, fx.st.Put(ctx, runs[1].Object, data))
	_, err = fx.merge(t, MergeRequest{Shards: 3})
	require.ErrorIs(t, err, ErrShardMismatch)
	assert.Contains(t, err.Error(), "--mutate ./a.md=b.md")

	// Corrupt objects: refused, naming the object.
	for _, bad := range [][]byte{good[:len(good)/2], []byte("{}"), []byte(strings.Replace(string(good), `"verdict": "reject"`, `"verdict": ""`, 1)),
		[]byte(strings.Replace(string(good), `"shard": 2`, `"shard": 1`, 1))} {
		require.NoError(t, fx.st.Put(ctx, runs[1].Object, bad))
		_, err = fx.merge(t, MergeRequest{Shards: 3})
		require.ErrorIs(t, err, ErrBadShard, "%s", bad)
		assert.Contains(t, err.Error(), runs[1].Object)
		assert.NotContains(t, err.Error(), "\n")
	}
	require.NoError(t, fx.st.Put(ctx, runs[1].Object, good))

	// Another run (other settings) in the same store: the key chooses.
	r := request(fx.root, &calls, fx.results)
	r.Out, r.Settings.Replicas = "out-other", 5
	other, err := RunShard(r, Shard{K: 1, N: 1}, fx.st)
	require.NoError(t, err)
	assert.NotEqual(t, runs[0].Doc.Key, other.Doc.Key, "other settings, another key")
	_, err = fx.merge(t, MergeRequest{})
	require.ErrorIs(t, err, ErrBadOptions)
	assert.Contains(t, err.Error(), "choose one with --settings-key")
	got, err := fx.merge(t, MergeRequest{Key: runs[0].Doc.Key, Shards: 3})
	require.NoError(t, err)
	assert.Equal(t, fx.single[JSONFile], got[JSONFile])
	_, err = fx.merge(t, MergeRequest{Key: "../x"})
	require.ErrorIs(t, err, ErrBadOptions)
}

// failingStore is a store that cannot be reached.
type failingStore struct{ store.Backend }

func (failingStore) List(context.Context, string) ([]string, error) {
	return nil, fmt.Errorf("dial tcp 127.0.0.1:1: %w", store.ErrUnreachable)
}
func (failingStore) String() string { return "s3://nowhere" }

func TestShardRefusesAnUnreachableStoreBeforeRunning(t *testing.T) {
	t.Parallel()
	fx := newShardFixture(t)
	var calls []string
	r := request(fx.root, &calls, fx.results)
	r.Out = "out-x"
	_, err := RunShard(r, Shard{K: 1, N: 2}, failingStore{})
	require.ErrorIs(t, err, store.ErrUnreachable)
	assert.Contains(t, err.Error(), "s3://nowhere cannot be used (nothing was run)")
	assert.Empty(t, calls)
	_, err = os.Stat(filepath.Join(fx.root, "out-x"))
	assert.True(t, errors.Is(err, os.ErrNotExist), "nothing written")
}

func FuzzDecodeShard(f *testing.F) {
	s := Settings{MutationHash: "h", Replicas: 2, Agent: "builtin:sim"}
	corpus := []string{"/a", "/b", "/c"}
	d := &ShardDoc{Format: ShardFormat, Key: RunKey(s, corpus), Shard: 2, Shards: 2, Settings: s, Corpus: corpus,
		Rows: []Row{{Pipeline: "/b", Key: s.Key("/b"), Error: "boom"}}}
	good, err := d.Encode()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(good))
	f.Add(strings.Replace(string(good), `"shard": 2`, `"shard": 3`, 1))
	f.Add(`{"format":"replay-corpus-shard/1","shard":1,"shards":1,"corpus":["/a"],"pipelines":[]}`)
	f.Add(`{"format":"replay-corpus/1"}`)
	f.Add(string(good[:40]))
	f.Fuzz(func(t *testing.T, data string) {
		doc, err := DecodeShard("obj", []byte(data))
		if err != nil {
			if !errors.Is(err, ErrBadShard) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error of another kind or over one line: %v", err)
			}
			return
		}
		sh := doc.Spec()
		if len(doc.Rows) != sh.Size(len(doc.Corpus)) || RunKey(doc.Settings, doc.Corpus) != doc.Key {
			t.Fatalf("accepted an inconsistent shard: %q", data)
		}
		for j, r := range doc.Rows {
			if r.Pipeline != doc.Corpus[sh.K-1+j*sh.N] || r.Verdict() == "" {
				t.Fatalf("accepted a row out of its slice: %q", data)
			}
		}
	})
}
