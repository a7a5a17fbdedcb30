package gitrepo

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// The benchmarks of this file compare a piece of replay's plumbing with what
// go-git offers for the same job, on the same input in the same run;
// bench/plumbing.sh runs them and prints the ratios (docs/git-plumbing.md).

// smallBlobs is n small source-file-like blobs.
func smallBlobs(n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = []byte(fmt.Sprintf("package p // file %d\nvar v%d = %d\n", i, i, i*7))
	}
	return out
}

// BenchmarkWriteSmallObjects writes 2,000 small blobs into a new repository: as
// one pack and its index (what a checkpoint does: EncodePackEntry, FinishPack;
// the pack synced), and with go-git's object storage, one loose object each
// (nothing synced).
func BenchmarkWriteSmallObjects(b *testing.B) {
	blobs := smallBlobs(2000)
	b.Run("ours-pack", func(b *testing.B) {
		for b.Loop() {
			dir := b.TempDir()
			f, err := os.Create(filepath.Join(dir, "tmp_pack"))
			if err != nil {
				b.Fatal(err)
			}
			h := PackHeader(0)
			body := bytes.NewBuffer(h[:])
			w := new(idxfile.Writer)
			if err := w.OnHeader(uint32(len(blobs))); err != nil {
				b.Fatal(err)
			}
			for _, data := range blobs {
				off := body.Len()
				if err := EncodePackEntry(body, plumbing.BlobObject, data); err != nil {
					b.Fatal(err)
				}
				w.Add(plumbing.ComputeHash(plumbing.BlobObject, data), uint64(off), 0)
			}
			if _, err := f.Write(body.Bytes()); err != nil {
				b.Fatal(err)
			}
			sum, err := FinishPack(f, uint32(len(blobs)), int64(body.Len()), make([]byte, 64<<10))
			if err != nil {
				b.Fatal(err)
			}
			if err := w.OnFooter(sum); err != nil {
				b.Fatal(err)
			}
			idx, err := w.Index()
			if err != nil {
				b.Fatal(err)
			}
			var ib bytes.Buffer
			if _, err := idxfile.NewEncoder(&ib).Encode(idx); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "tmp_idx"), ib.Bytes(), 0o444); err != nil {
				b.Fatal(err)
			}
			if err := f.Sync(); err != nil {
				b.Fatal(err)
			}
			f.Close()
		}
	})
	b.Run("go-git-loose", func(b *testing.B) {
		for b.Loop() {
			st := filesystem.NewStorage(osfs.New(b.TempDir()), cache.NewObjectLRUDefault())
			for _, data := range blobs {
				o := st.NewEncodedObject()
				o.SetType(plumbing.BlobObject)
				w, _ := o.Writer()
				w.Write(data)
				w.Close()
				if _, err := st.SetEncodedObject(o); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// BenchmarkPackIndexLookups opens the index of a 100,000-object pack and looks up
// 300 objects: in place (OpenPackIndex), and decoded whole by go-git's idxfile.
func BenchmarkPackIndexLookups(b *testing.B) {
	w := new(idxfile.Writer)
	if err := w.OnHeader(100000); err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	var hashes []plumbing.Hash
	for i := range 100000 {
		var h plumbing.Hash
		for j := range h {
			h[j] = byte(r.Uint32())
		}
		hashes = append(hashes, h)
		w.Add(h, uint64(12+i*40), 0)
	}
	if err := w.OnFooter(plumbing.ZeroHash); err != nil {
		b.Fatal(err)
	}
	idx, err := w.Index()
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "pack.idx")
	var buf bytes.Buffer
	if _, err := idxfile.NewEncoder(&buf).Encode(idx); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o444); err != nil {
		b.Fatal(err)
	}
	b.Run("ours-in-place", func(b *testing.B) {
		for b.Loop() {
			pi, err := OpenPackIndex(path)
			if err != nil {
				b.Fatal(err)
			}
			for _, h := range hashes[:300] {
				if _, err := pi.FindOffset(h); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("go-git-decode", func(b *testing.B) {
		for b.Loop() {
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			mi := idxfile.NewMemoryIndex()
			if err := idxfile.NewDecoder(f).Decode(mi); err != nil {
				b.Fatal(err)
			}
			f.Close()
			for _, h := range hashes[:300] {
				if _, err := mi.FindOffset(h); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// BenchmarkWriteLooseObjects writes 500 small blobs as loose objects: with
// LooseObjects (synced, as replay does, and not), and with go-git's object
// storage (which syncs nothing).
func BenchmarkWriteLooseObjects(b *testing.B) {
	blobs := smallBlobs(500)
	b.Run("ours", func(b *testing.B) {
		for b.Loop() {
			l := NewLooseObjects(filepath.Join(b.TempDir(), "objects"))
			for _, data := range blobs {
				if err := l.Write(plumbing.ComputeHash(plumbing.BlobObject, data), plumbing.BlobObject, data); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := l.Sync(); err != nil {
				b.Fatal(err)
			}
		}
	})
	// go-git syncs nothing: the same writes without LooseObjects.Sync.
	b.Run("ours-unsynced", func(b *testing.B) {
		for b.Loop() {
			l := NewLooseObjects(filepath.Join(b.TempDir(), "objects"))
			for _, data := range blobs {
				if err := l.Write(plumbing.ComputeHash(plumbing.BlobObject, data), plumbing.BlobObject, data); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("go-git", func(b *testing.B) {
		for b.Loop() {
			st := filesystem.NewStorage(osfs.New(b.TempDir()), cache.NewObjectLRUDefault())
			for _, data := range blobs {
				o := st.NewEncodedObject()
				o.SetType(plumbing.BlobObject)
				w, _ := o.Writer()
				w.Write(data)
				w.Close()
				if _, err := st.SetEncodedObject(o); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
