package manifest

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkSeqChecks100k times what `replay manifest seq` does on a 100,000-line
// manifest: the script's corrupt-line count, then one above every seq ever used.
func BenchmarkSeqChecks100k(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, ManifestFile)
	writeBenchManifest(b, path, 100_000)
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	b.ReportAllocs()
	for b.Loop() {
		if n, err := InteriorCorrupt(path); err != nil || n != 0 {
			b.Fatalf("corrupt %d: %v", n, err)
		}
		if next, err := NextSeq(dir); err != nil || next != 50_001 {
			b.Fatalf("next %d: %v", next, err)
		}
	}
}

// BenchmarkInteriorCorrupt100k times the corrupt-line count alone.
func BenchmarkInteriorCorrupt100k(b *testing.B) {
	path := filepath.Join(b.TempDir(), ManifestFile)
	writeBenchManifest(b, path, 100_000)
	b.ReportAllocs()
	for b.Loop() {
		if n, err := InteriorCorrupt(path); err != nil || n != 0 {
			b.Fatalf("corrupt %d: %v", n, err)
		}
	}
}
