package corpus

import (
	"context"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/replaytool/replay/internal/errkind"
	"github.com/replaytool/replay/internal/safewrite"
	"github.com/replaytool/replay/store"
)

// MergeRequest is a merge of the shards of a sharded corpus run in a store.
type MergeRequest struct {
	Store store.Backend
	// Key is the run's key (RunKey); "" means the only run in the store.
	Key string
	// Shards picks the shard count when the store holds the run sharded more
	// than one way; 0 means the only count there is.
	Shards int
	// Now stamps the merged result, as the clock stamps a single-process run.
	Now time.Time
	Ctx context.Context
}

// Merge reads every shard of one sharded corpus run from the store, checks that
// shards 1..N are all there and agree on N, the settings and the corpus, and
// returns the result a single-process corpus run over the same corpus writes.
// A missing shard is an ErrIncomplete error naming it, shards that disagree an
// ErrShardMismatch error, a corrupt one an ErrBadShard error; nothing is written.
func Merge(r MergeRequest) (*Result, error) {
	if r.Ctx == nil {
		r.Ctx = context.Background()
	}
	key, err := findRun(r)
	if err != nil {
		return nil, err
	}
	n, err := shardCount(r, key)
	if err != nil {
		return nil, err
	}
	docs := make([]*ShardDoc, n)
	for k := 1; k <= n; k++ {
		obj := Shard{K: k, N: n}.ObjectKey(key)
		data, _, err := r.Store.Get(r.Ctx, obj, store.MaxObject)
		if err != nil {
			return nil, fmt.Errorf("corpus shard %s in %s: %w", obj, r.Store, err)
		}
		d, err := DecodeShard(r.Store.String()+"/"+obj, data)
		if err != nil {
			return nil, err
		}
		if err := agree(docs[0], d, key, Shard{K: k, N: n}); err != nil {
			return nil, err
		}
		docs[k-1] = d
	}
	rows := make([]Row, len(docs[0].Corpus))
	for i := range rows {
		rows[i] = docs[i%n].Rows[i/n]
	}
	return build(Request{Settings: docs[0].Settings, Now: r.Now}, rows), nil
}

// agree checks that d, read as shard sh of run key, is that shard and of the
// same run as first (nil when d is the first).
func agree(first, d *ShardDoc, key string, sh Shard) error {
	name := sh.ObjectKey(key)
	if d.Key != key || d.Spec() != sh {
		return errkind.Errorf(ErrBadShard, "corpus shard %s holds shard %s of run %s; run shard %s again to replace it", name, d.Spec(), d.Key, sh)
	}
	if first == nil {
		return nil
	}
	if !slices.Equal(first.Settings.Mutations, d.Settings.Mutations) {
		return errkind.Errorf(ErrShardMismatch, "corpus shard %s was run with --mutate %s, shard 1 with --mutate %s; run every shard with the same arguments",
			name, strings.Join(d.Settings.Mutations, " "), strings.Join(first.Settings.Mutations, " "))
	}
	return nil
}

// findRun returns r.Key, or the key of the only run in the store.
func findRun(r MergeRequest) (string, error) {
	if r.Key != "" {
		if !isRunKey(r.Key) {
			return "", errkind.Errorf(ErrBadOptions, "--settings-key %q: not a run key (32 hex digits); give the key replay corpus --shard printed", r.Key)
		}
		return r.Key, nil
	}
	objs, err := r.Store.List(r.Ctx, "corpus/")
	if err != nil {
		return "", fmt.Errorf("listing the corpus shards in %s: %w", r.Store, err)
	}
	runs := map[string]int{}
	for _, o := range objs {
		parts := strings.Split(o, "/")
		if len(parts) == 3 && isRunKey(parts[1]) {
			if _, ok := shardName(parts[2]); ok {
				runs[parts[1]]++
			}
		}
	}
	var keys []string
	for k, c := range runs {
		keys = append(keys, fmt.Sprintf("%s (%d shard objects)", k, c))
	}
	slices.Sort(keys)
	switch len(keys) {
	case 0:
		return "", errkind.Errorf(ErrIncomplete, "no corpus shards in %s; run replay corpus --shard K/N --to %s first", r.Store, r.Store)
	case 1:
		return strings.Fields(keys[0])[0], nil
	}
	return "", errkind.Errorf(ErrBadOptions, "%s holds %d sharded corpus runs: %s; choose one with --settings-key KEY", r.Store, len(keys), strings.Join(keys, ", "))
}

// isRunKey reports whether k has the form of a RunKey; other names under
// corpus/ (the store is not trusted) are not shards of a run.
func isRunKey(k string) bool {
	if len(k) != 32 {
		return false
	}
	_, err := hex.DecodeString(k)
	return err == nil && strings.ToLower(k) == k
}

// shardCount returns the N of the run's shards in the store: the only one, or
// r.Shards; and checks that shards 1..N are all there.
func shardCount(r MergeRequest, key string) (int, error) {
	objs, err := r.Store.List(r.Ctx, ShardPrefix(key)+"/")
	if err != nil {
		return 0, fmt.Errorf("listing the corpus shards in %s: %w", r.Store, err)
	}
	have := map[int][]int{}
	for _, o := range objs {
		if sh, ok := shardName(strings.TrimPrefix(o, ShardPrefix(key)+"/")); ok {
			have[sh.N] = append(have[sh.N], sh.K)
		}
	}
	n := r.Shards
	if n == 0 {
		if len(have) > 1 {
			var counts []string
			for c, ks := range have {
				counts = append(counts, fmt.Sprintf("N=%d (shards %s)", c, ints(ks)))
			}
			slices.Sort(counts)
			return 0, errkind.Errorf(ErrShardMismatch, "%s/%s holds the run sharded in %d ways: %s; choose one with --shards N", r.Store, ShardPrefix(key), len(have), strings.Join(counts, ", "))
		}
		for c := range have {
			n = c
		}
	}
	if n == 0 {
		return 0, errkind.Errorf(ErrIncomplete, "no corpus shards of run %s in %s; check --settings-key, or run replay corpus --shard K/N --to %s", key, r.Store, r.Store)
	}
	var missing []int
	for k := 1; k <= n; k++ {
		if !slices.Contains(have[n], k) {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return 0, errkind.Errorf(ErrIncomplete, "%s/%s: shard %s of %d missing (present: %s); run replay corpus --shard K/%d --to %s for each missing K, then merge again",
			r.Store, ShardPrefix(key), ints(missing), n, orNone(ints(have[n])), n, r.Store)
	}
	return n, nil
}

func ints(xs []int) string {
	xs = slices.Clone(xs)
	slices.Sort(xs)
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// WriteResult saves a merged result in dir as Run saves its own: the same
// corpus-result.json and corpus-result.md (each replaced atomically). A merged
// result has no log of its own.
func WriteResult(dir string, res *Result) error {
	if err := safewrite.MkdirAll(dir); err != nil {
		return fmt.Errorf("corpus output %s: %w; give a directory replay can create", dir, err)
	}
	if err := write(dir, res); err != nil {
		return err
	}
	res.Files.Log = ""
	return nil
}
