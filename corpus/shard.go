package corpus

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/replaytool/replay/internal/errkind"
)

// ErrBadShard is the kind of the error for a shard object in the store that is
// not a complete, consistent shard document (corrupt, truncated, edited, or of
// another format).
var ErrBadShard = errors.New("corrupt corpus shard")

// ErrIncomplete is the kind of the error for a merge that misses shards.
var ErrIncomplete = errors.New("corpus shards missing")

// ErrShardMismatch is the kind of the error for shards that do not belong to one
// corpus run: other shard counts, settings or pipelines.
var ErrShardMismatch = errors.New("corpus shards of other runs")

// ShardFormat names the version of the shard document layout.
const ShardFormat = "replay-corpus-shard/1"

// MaxShards bounds N in --shard K/N.
const MaxShards = 10000

// Shard is one slice of a corpus: the K-th of N (1 ≤ K ≤ N).
//
// The slice rule: the corpus is expanded and sorted (Expand), and the pipeline
// at 0-based position i belongs to shard i mod N + 1 (round robin). It depends
// only on the arguments, never on which process starts first, so every process
// computes the same partition alone; the shard sizes differ by at most one; and
// neighbours in sorted order (often pipelines of one kind and size) land on
// different shards.
type Shard struct {
	K, N int
}

// ParseShard reads a shard spec "K/N"; anything else is an ErrBadOptions error.
func ParseShard(spec string) (Shard, error) {
	bad := func(why string) (Shard, error) {
		return Shard{}, errkind.Errorf(ErrBadOptions, "--shard %q: %s; give K/N with 1 <= K <= N, e.g. --shard 2/4", spec, why)
	}
	ks, ns, ok := strings.Cut(spec, "/")
	if !ok {
		return bad("not K/N")
	}
	k, errK := strconv.Atoi(ks)
	n, errN := strconv.Atoi(ns)
	switch {
	case errK != nil || errN != nil || strings.TrimSpace(ks) != ks || strings.TrimSpace(ns) != ns:
		return bad("K and N are whole numbers")
	case n < 1:
		return bad("N is at least 1")
	case n > MaxShards:
		return bad(fmt.Sprintf("N is at most %d", MaxShards))
	case k < 1 || k > n:
		return bad(fmt.Sprintf("K is between 1 and N (%d)", n))
	}
	return Shard{K: k, N: n}, nil
}

// String is the spec "K/N".
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.K, s.N) }

// Has reports whether the pipeline at 0-based corpus position i is in s.
func (s Shard) Has(i int) bool { return i%s.N == s.K-1 }

// Size is the number of pipelines of a corpus of total pipelines in s.
func (s Shard) Size(total int) int {
	if total < s.K {
		return 0
	}
	return (total-s.K)/s.N + 1
}

// ObjectKey is the store key of shard s of the corpus run key.
func (s Shard) ObjectKey(key string) string {
	return fmt.Sprintf("%s/shard-%d-of-%d.json", ShardPrefix(key), s.K, s.N)
}

// shardName reads the shard of an object name made by ObjectKey.
func shardName(name string) (Shard, bool) {
	var s Shard
	rest, ok := strings.CutPrefix(name, "shard-")
	if !ok {
		return s, false
	}
	rest, ok = strings.CutSuffix(rest, ".json")
	if !ok {
		return s, false
	}
	ks, ns, ok := strings.Cut(rest, "-of-")
	if !ok {
		return s, false
	}
	sh, err := ParseShard(ks + "/" + ns)
	if err != nil || sh.ObjectKey("x") != "corpus/x/"+name {
		return s, false
	}
	return sh, true
}

// RunKey identifies a sharded corpus run in a store: the settings fingerprint
// (what every pipeline is replayed with, the mutation by content) and the
// expanded corpus. Shards of other settings or another corpus get another key,
// so they never mix; N is not part of it, so a merge can tell a run sharded two
// ways apart and say so.
func RunKey(s Settings, dirs []string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%d\x00", ShardFormat, s.fingerprint(), len(dirs))
	for _, d := range dirs {
		fmt.Fprintf(h, "%s\x00", d)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// ShardPrefix is the store prefix of the shards of the corpus run key.
func ShardPrefix(key string) string { return "corpus/" + key }

// ShardDoc is what one shard writes to the store: the run's key, settings and
// whole corpus (so a merge can check the shards agree), and the rows of the
// shard's own pipelines in corpus order.
type ShardDoc struct {
	Format    string    `json:"format"`
	Key       string    `json:"key"`
	Shard     int       `json:"shard"`
	Shards    int       `json:"shards"`
	Generated time.Time `json:"generated_at"`
	Settings  Settings  `json:"settings"`
	Corpus    []string  `json:"corpus"`
	Rows      []Row     `json:"pipelines"`
}

// Spec is the doc's shard.
func (d *ShardDoc) Spec() Shard { return Shard{K: d.Shard, N: d.Shards} }

// Encode is the document's bytes as stored.
func (d *ShardDoc) Encode() ([]byte, error) {
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("corpus shard %s: %w", d.Spec(), err)
	}
	return append(b, '\n'), nil
}

// DecodeShard parses and checks a shard document read from name: its format, its
// shard within its count, a sorted corpus of absolute paths that gives its key,
// and exactly the rows of its slice, each of its pipeline and key. Anything
// else is an ErrBadShard error naming name and the field.
func DecodeShard(name string, data []byte) (*ShardDoc, error) {
	var d ShardDoc
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, badShard(name, "not a corpus shard document (%v)", err)
	}
	if d.Format != ShardFormat {
		return nil, badShard(name, "format %q, this replay reads %s", d.Format, ShardFormat)
	}
	if d.Shards < 1 || d.Shards > MaxShards || d.Shard < 1 || d.Shard > d.Shards {
		return nil, badShard(name, "shard %d of %d is not a shard", d.Shard, d.Shards)
	}
	if len(d.Corpus) == 0 {
		return nil, badShard(name, "field corpus is empty")
	}
	for i, p := range d.Corpus {
		if !filepath.IsAbs(p) || filepath.Clean(p) != p || (i > 0 && d.Corpus[i-1] >= p) {
			return nil, badShard(name, "corpus[%d] %q is not a clean absolute path in sorted order", i, p)
		}
	}
	if RunKey(d.Settings, d.Corpus) != d.Key {
		return nil, badShard(name, "field key %q does not match its settings and corpus", d.Key)
	}
	sh := d.Spec()
	if len(d.Rows) != sh.Size(len(d.Corpus)) {
		return nil, badShard(name, "%d pipelines, shard %s of a corpus of %d has %d", len(d.Rows), sh, len(d.Corpus), sh.Size(len(d.Corpus)))
	}
	for j, r := range d.Rows {
		want := d.Corpus[sh.K-1+j*sh.N]
		switch {
		case r.Pipeline != want:
			return nil, badShard(name, "pipelines[%d] is %q, the slice has %q there", j, r.Pipeline, want)
		case r.Key != d.Settings.Key(want):
			return nil, badShard(name, "pipelines[%d].key %q does not match its pipeline and settings", j, r.Key)
		case r.Decision == nil && r.Error == "":
			return nil, badShard(name, "pipelines[%d] has neither a decision nor an error", j)
		case r.Decision != nil && r.Decision.Verdict == "":
			return nil, badShard(name, "pipelines[%d].decision has no verdict", j)
		}
	}
	return &d, nil
}

func badShard(name, format string, args ...any) error {
	return errkind.Errorf(ErrBadShard, "corpus shard %s: %s; run that shard again to replace it", name, fmt.Sprintf(format, args...))
}
