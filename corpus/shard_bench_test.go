package corpus

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/replaytool/replay/store"
)

// BenchmarkMerge merges a corpus of 2,000 pipelines put as 20 shards into a
// directory store: listing, reading and checking every shard, interleaving the
// rows and summing them up.
func BenchmarkMerge(b *testing.B) {
	const pipelines, n = 2000, 20
	st, err := store.OpenDir(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	s := Settings{Mutations: []string{"a.md=b.md"}, MutationHash: "abc", Replicas: 5, Agent: "builtin:sim", Metric: "duration_s"}
	dirs := make([]string, pipelines)
	for i := range dirs {
		dirs[i] = fmt.Sprintf("/corpus/runs/p%05d/project", i)
	}
	key := RunKey(s, dirs)
	res := fakeResult(5, 4, 5, 100, 80)
	for k := 1; k <= n; k++ {
		sh := Shard{K: k, N: n}
		d := &ShardDoc{Format: ShardFormat, Key: key, Shard: k, Shards: n, Settings: s, Corpus: dirs}
		for i, dir := range dirs {
			if sh.Has(i) {
				d.Rows = append(d.Rows, rowOf(dir, s.Key(dir), dir+"/report.md", res))
			}
		}
		data, err := d.Encode()
		if err != nil {
			b.Fatal(err)
		}
		if err := st.Put(context.Background(), sh.ObjectKey(key), data); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		got, err := Merge(MergeRequest{Store: st, Now: time.Unix(0, 0)})
		if err != nil || len(got.Rows) != pipelines {
			b.Fatalf("merge: %v", err)
		}
	}
}
