package pipesim

import (
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
)

func BenchmarkGenerate(b *testing.B) {
	dir := b.TempDir()
	for i := 0; i < b.N; i++ {
		if _, err := Generate(int64(i+1), filepath.Join(dir, strconv.Itoa(i))); err != nil {
			b.Fatal(err)
		}
	}
}

func TestGenerateIsDeterministic(t *testing.T) {
	t.Parallel()
	for seed := int64(1); seed <= 6; seed++ {
		a, err := Generate(seed, filepath.Join(t.TempDir(), "a"))
		if err != nil {
			t.Fatal(err)
		}
		b, err := Generate(seed, filepath.Join(t.TempDir(), "b"))
		if err != nil {
			t.Fatal(err)
		}
		a.Project, a.Home, a.Tmp, b.Project, b.Home, b.Tmp = "", "", "", "", "", ""
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("seed %d: two generations differ:\n%+v\n%+v", seed, a, b)
		}
	}
}
