package gitrepo

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// encodedIdx is the index file of n random objects, some at offsets past 2 GiB
// (the table of large offsets), and the objects by offset.
func encodedIdx(t *testing.T, n int, seed uint64) ([]byte, map[plumbing.Hash]int64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 3))
	want := map[plumbing.Hash]int64{}
	var hashes []plumbing.Hash
	for range n {
		var h plumbing.Hash
		for i := range h {
			h[i] = byte(rng.IntN(256))
		}
		if _, ok := want[h]; ok {
			continue
		}
		off := int64(rng.IntN(1 << 30))
		if rng.IntN(4) == 0 {
			off += 3 << 30
		}
		want[h] = off
		hashes = append(hashes, h)
	}
	sort.Slice(hashes, func(i, j int) bool { return bytes.Compare(hashes[i][:], hashes[j][:]) < 0 })
	w := new(idxfile.Writer)
	require.NoError(t, w.OnHeader(uint32(len(hashes))))
	for _, h := range hashes {
		w.Add(h, uint64(want[h]), 7)
	}
	require.NoError(t, w.OnFooter(plumbing.Hash{1}))
	idx, err := w.Index()
	require.NoError(t, err)
	var buf bytes.Buffer
	_, err = idxfile.NewEncoder(&buf).Encode(idx)
	require.NoError(t, err)
	return buf.Bytes(), want
}

// TestPackIndexFindsWhatTheDecoderFinds: looked up in place, an index gives every
// object's offset (large offsets included) and no object it does not hold.
func TestPackIndexFindsWhatTheDecoderFinds(t *testing.T) {
	for _, n := range []int{0, 1, 300, 5000} {
		data, want := encodedIdx(t, n, uint64(n))
		path := filepath.Join(t.TempDir(), "pack-x.idx")
		require.NoError(t, os.WriteFile(path, data, 0o444))
		for _, idx := range []*PackIndex{mustRaw(t, data), mustOpen(t, path), mustRead(t, path)} {
			for h, off := range want {
				got, err := idx.FindOffset(h)
				require.NoError(t, err)
				require.Equal(t, off, got)
			}
			rng := rand.New(rand.NewPCG(9, 9))
			for range 1000 {
				var h plumbing.Hash
				for i := range h {
					h[i] = byte(rng.IntN(256))
				}
				if _, ok := want[h]; !ok {
					_, err := idx.FindOffset(h)
					require.ErrorIs(t, err, plumbing.ErrObjectNotFound)
				}
			}
		}
	}
}

func mustRaw(t *testing.T, data []byte) *PackIndex {
	t.Helper()
	r, err := NewPackIndex(data)
	require.NoError(t, err)
	return r
}

func mustOpen(t *testing.T, path string) *PackIndex {
	t.Helper()
	r, err := OpenPackIndex(path)
	require.NoError(t, err)
	return r
}

func mustRead(t *testing.T, path string) *PackIndex {
	t.Helper()
	r, err := readPackIndex(path)
	require.NoError(t, err)
	return r
}

// TestPackIndexRefusesDamage: a torn or altered index is refused (its objects then
// count as missing and are written again), like the decoder refuses it.
func TestPackIndexRefusesDamage(t *testing.T) {
	data, _ := encodedIdx(t, 500, 1)
	for _, at := range []int{0, 5, 8 + 4*17, idxFanoutEnd + 3, len(data) / 2, len(data) - 50, len(data) - 1} {
		bad := append([]byte(nil), data...)
		bad[at] ^= 0x04
		_, err := NewPackIndex(bad)
		assert.Error(t, err, "byte %d flipped", at)
		err = idxfile.NewDecoder(bytes.NewReader(bad)).Decode(idxfile.NewMemoryIndex())
		assert.Error(t, err, "byte %d flipped: the decoder takes it", at)
	}
	for _, n := range []int{0, 8, idxFanoutEnd, len(data) - 1, len(data) - 8} {
		_, err := NewPackIndex(data[:n])
		assert.Error(t, err, "cut at %d", n)
	}
	path := filepath.Join(t.TempDir(), "pack-x.idx")
	require.NoError(t, os.WriteFile(path, data[:len(data)/2], 0o444))
	_, err := OpenPackIndex(path)
	assert.Error(t, err)
}
