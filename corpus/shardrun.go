package corpus

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/replaytool/replay/internal/errkind"
	"github.com/replaytool/replay/store"
)

// ShardRun is a finished shard: its document and where it was put.
type ShardRun struct {
	Doc *ShardDoc
	// Object is the document's key in Store; Store names the store.
	Object, Store string
	// Log is the shard's corpus log in the output directory.
	Log string
}

// ShardLogFile is the corpus log of shard sh in the output directory: each
// shard keeps its own, so shards sharing a directory never write one file.
func ShardLogFile(sh Shard) string {
	return fmt.Sprintf("corpus-log.shard-%d-of-%d.jsonl", sh.K, sh.N)
}

// RunShard carries out shard sh of the corpus run of r: the pipelines of its
// slice (see Shard), logged in r.Out as Run logs them (a rerun after a kill
// skips the finished ones), then one Put of the whole shard document to st, so
// the shard's object is complete or absent, and a rerun of the shard replaces
// only its own. The store is checked before anything runs.
func RunShard(r Request, sh Shard, st store.Backend) (*ShardRun, error) {
	if r.Out == "" {
		return nil, errkind.New(ErrBadOptions, "--out DIR is required: the directory where the shard's corpus log is kept (a rerun continues from it)")
	}
	if r.Ctx == nil {
		r.Ctx = context.Background()
	}
	dirs, err := Expand(r.Args, r.Cwd)
	if err != nil {
		return nil, err
	}
	key := RunKey(r.Settings, dirs)
	obj := sh.ObjectKey(key)
	if _, err := st.List(r.Ctx, ShardPrefix(key)+"/"); err != nil {
		return nil, fmt.Errorf("corpus shard %s: the store %s cannot be used (nothing was run): %w", sh, st, err)
	}
	out := r.Out
	if !filepath.IsAbs(out) {
		out = filepath.Join(r.Cwd, out)
	}
	lg, err := openLog(out, ShardLogFile(sh), r.Settings)
	if err != nil {
		return nil, err
	}
	var mine []string
	for i, d := range dirs {
		if sh.Has(i) {
			mine = append(mine, d)
		}
	}
	say(r.Info, fmt.Sprintf("shard %s: %d of the corpus's %d pipelines; run %s\n", sh, len(mine), len(dirs), key))
	rows, err := runRows(r, lg, mine, "shard "+sh.String()+": ")
	if err != nil {
		return nil, err
	}
	doc := &ShardDoc{Format: ShardFormat, Key: key, Shard: sh.K, Shards: sh.N, Generated: r.Now,
		Settings: r.Settings, Corpus: dirs, Rows: rows}
	data, err := doc.Encode()
	if err != nil {
		return nil, err
	}
	if _, err := DecodeShard(obj, data); err != nil {
		return nil, fmt.Errorf("corpus shard %s: the document made does not read back (a bug; nothing was put): %w", sh, err)
	}
	if err := st.Put(r.Ctx, obj, data); err != nil {
		return nil, fmt.Errorf("corpus shard %s: putting %s into %s (the finished pipelines are in %s: run the same command again to retry): %w", sh, obj, st, lg.path, err)
	}
	return &ShardRun{Doc: doc, Object: obj, Store: st.String(), Log: lg.path}, nil
}
