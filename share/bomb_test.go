package share_test

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/share"
)

// Pack-building helpers: hand-made packfiles, as a hostile store would serve.

func deflate(data []byte) []byte {
	var b bytes.Buffer
	w := zlib.NewWriter(&b)
	w.Write(data)
	w.Close()
	return b.Bytes()
}

// entryHead is a pack entry's type-and-size header.
func entryHead(typ byte, size uint64) []byte {
	b := []byte{typ<<4 | byte(size&0x0f)}
	for size >>= 4; size > 0; size >>= 7 {
		b[len(b)-1] |= 0x80
		b = append(b, byte(size&0x7f))
	}
	return b
}

func sizeVarint(v uint64) []byte {
	var b []byte
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

type packEntry struct {
	typ      byte   // 1-4 whole objects, 7 a ref delta
	declared uint64 // the size its header declares
	base     plumbing.Hash
	body     []byte // deflated content
}

// makeBundle is a v2 bundle with one ref (to hash) and a packfile of entries.
func makeBundle(ref plumbing.Hash, entries ...packEntry) []byte {
	var pack bytes.Buffer
	pack.WriteString("PACK")
	binary.Write(&pack, binary.BigEndian, uint32(2))
	binary.Write(&pack, binary.BigEndian, uint32(len(entries)))
	for _, e := range entries {
		pack.Write(entryHead(e.typ, e.declared))
		if e.typ == 7 {
			pack.Write(e.base[:])
		}
		pack.Write(e.body)
	}
	sum := sha1.Sum(pack.Bytes())
	pack.Write(sum[:])
	return append([]byte(fmt.Sprintf("# v2 git bundle\n%s refs/heads/main\n\n", ref)), pack.Bytes()...)
}

// blobEntry is a whole blob of content, and its hash.
func blobEntry(content []byte) (packEntry, plumbing.Hash) {
	return packEntry{typ: 3, declared: uint64(len(content)), body: deflate(content)},
		plumbing.ComputeHash(plumbing.BlobObject, content)
}

// deltaBomb is a ref delta on base (64 KiB) copying all of it again and
// again: one instruction byte makes 64 KiB, so `target` bytes come from a
// delta of target/64Ki bytes, deflated to almost nothing.
func deltaBomb(base plumbing.Hash, target uint64) packEntry {
	d := append(sizeVarint(64<<10), sizeVarint(target)...)
	d = append(d, bytes.Repeat([]byte{0x80}, int(target/(64<<10)))...) // copy offset 0, size 0x10000
	return packEntry{typ: 7, declared: uint64(len(d)), base: base, body: deflate(d)}
}

// bombBundles are small bundles that inflate far, by name.
func bombBundles() map[string][]byte {
	base, bh := blobEntry(bytes.Repeat([]byte("replay "), (64<<10)/7+1)[:64<<10])
	out := map[string][]byte{
		// One delta making 2 GiB: past the 1 GiB bound of one object.
		"delta-2GiB": makeBundle(bh, base, deltaBomb(bh, 2<<30)),
		// 40 deltas of 16 MiB (640 MiB) from a pack of a few KB: past the ratio.
		"deltas-ratio": func() []byte {
			entries := []packEntry{base}
			for range 40 {
				entries = append(entries, deltaBomb(bh, 16<<20))
			}
			return makeBundle(bh, entries...)
		}(),
		// A blob declaring 3 GiB over a few bytes of zlib.
		"declared-3GiB": makeBundle(bh, packEntry{typ: 3, declared: 3 << 30, body: deflate([]byte("x"))}),
		// A pack claiming more objects than its bytes can hold (the count
		// would size allocations).
		"count-lies": func() []byte {
			b := makeBundle(bh, base)
			i := bytes.Index(b, []byte("PACK"))
			binary.BigEndian.PutUint32(b[i+8:], 1<<30)
			return b
		}(),
	}
	return out
}

// TestUnbundleRefusesBombs: a small bundle whose objects would inflate far
// (deltas copying one region over and over, a declared size of gigabytes,
// an object count its bytes cannot hold) is refused by the scan before git
// stores anything: no pack, no loose object in the repository.
func TestUnbundleRefusesBombs(t *testing.T) {
	t.Parallel()
	for name, data := range bombBundles() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			assert.Less(t, len(data), 64<<10, "a small bundle")
			dir := t.TempDir()
			st := filesystem.NewStorage(osfs.New(dir), cache.NewObjectLRUDefault())
			_, err := share.Unbundle(st, bytes.NewReader(data), int64(len(data)))
			require.Error(t, err)
			if name != "count-lies" {
				assert.Contains(t, err.Error(), "decompression bomb")
			}
			var files []string
			require.NoError(t, filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
				if err == nil && !info.IsDir() {
					files = append(files, p)
				}
				return err
			}))
			assert.Empty(t, files, "nothing written")
		})
	}
}

// TestUnbundleAcceptsWhatCompressesWell: the other side of the guard: 64
// MiB of one repeated line, whole, compresses to zlib's limit (about 1000:1)
// and is accepted,
// and a delta copying its base a few times (inflating to 4 times the base,
// a few KB) too.
func TestUnbundleAcceptsWhatCompressesWell(t *testing.T) {
	t.Parallel()
	content := bytes.Repeat([]byte("0123456789abcdef"), 4<<20) // 64 MiB
	big, bigHash := blobEntry(content)
	base, bh := blobEntry(bytes.Repeat([]byte("replay "), (64<<10)/7+1)[:64<<10])
	for name, data := range map[string][]byte{
		"whole":  makeBundle(bigHash, big),
		"deltas": makeBundle(bh, base, deltaBomb(bh, 256<<10)),
	} {
		dir := t.TempDir()
		st := filesystem.NewStorage(osfs.New(dir), cache.NewObjectLRUDefault())
		refs, err := share.Unbundle(st, bytes.NewReader(data), int64(len(data)))
		require.NoError(t, err, name)
		require.Len(t, refs, 1)
	}
}

// TestWriteBombSeeds writes the bomb bundles into the fuzz seed corpus when
// REPLAY_WRITE_FUZZ_SEEDS is set (they are committed; this regenerates them).
func TestWriteBombSeeds(t *testing.T) {
	if os.Getenv("REPLAY_WRITE_FUZZ_SEEDS") == "" {
		t.Skip("set REPLAY_WRITE_FUZZ_SEEDS=1 to regenerate testdata/fuzz/FuzzUnbundle")
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzUnbundle")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for name, data := range bombBundles() {
		if len(data) > 4<<10 {
			continue // the fuzzer mutates small inputs best; f.Add has the large ones
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("go test fuzz v1\n[]byte("+strconv.Quote(string(data))+")\n"), 0o644))
	}
}
