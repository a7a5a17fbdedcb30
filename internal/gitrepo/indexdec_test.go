package gitrepo

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/testkit/testtools"
)

// goGitDecode is what go-git's decoder makes of data.
func goGitDecode(data []byte) (*index.Index, error) {
	idx := &index.Index{Version: 2}
	err := index.NewDecoder(bytes.NewReader(data)).Decode(idx)
	return idx, err
}

// resum replaces the checksum closing data with the SHA-1 of the rest.
func resum(data []byte) []byte {
	out := bytes.Clone(data)
	sum := sha1.Sum(out[:len(out)-20])
	copy(out[len(out)-20:], sum[:])
	return out
}

// withExtension inserts the extension sig with body before data's checksum.
func withExtension(data []byte, sig string, body []byte) []byte {
	out := bytes.Clone(data[:len(data)-20])
	out = append(out, sig...)
	out = binary.BigEndian.AppendUint32(out, uint32(len(body)))
	out = append(out, body...)
	return resum(append(out, make([]byte, 20)...))
}

// assertDecodesAsGoGit checks that DecodeIndex gives go-git's index and error for
// data, and whether it decoded data itself (fast) or left it to go-git.
func assertDecodesAsGoGit(t *testing.T, name string, data []byte, fast bool) {
	t.Helper()
	want, wantErr := goGitDecode(data)
	got, err := DecodeIndex(data)
	assert.Equal(t, wantErr, err, name)
	assert.Equal(t, want, got, name)
	_, ok := decodePlainIndex(data)
	assert.Equal(t, fast, ok, "%s: decoded without go-git", name)
}

// TestDecodeIndexMatchesGoGit: for indexes the git binary made (plain, TREE and
// EOIE extensions, version 3 extended flags, the untracked cache, version 4, a
// split index) and altered ones (unknown extensions, a resolve-undo extension, a
// long name, corrupt and truncated files), DecodeIndex returns what go-git's
// decoder returns, and decodes the version 2 and 3 ones itself.
func TestDecodeIndexMatchesGoGit(t *testing.T) {
	t.Parallel()
	testtools.Git(t, "git binary not installed")
	made := map[string]struct {
		steps []string
		fast  bool
	}{
		"plain":           {[]string{"add -A"}, true},
		"tree extension":  {[]string{"add -A", "commit -q -m c", "write-tree"}, true},
		"end of entries":  {[]string{"add -A", "commit -q -m c", "-c index.recordEndOfIndexEntries=true update-index --force-write-index --refresh"}, true},
		"extended flags":  {[]string{"add -A", "rm -q --cached new.txt", "commit -q -m c", "update-index --skip-worktree a.txt", "add -N new.txt"}, true},
		"untracked cache": {[]string{"add -A", "commit -q -m c", "update-index --untracked-cache", "status -uall --porcelain"}, true},
		"version 4":       {[]string{"add -A", "commit -q -m c", "update-index --index-version 4"}, false},
		"split index":     {[]string{"add -A", "commit -q -m c", "update-index --split-index", "rm -q --cached z"}, false},
	}
	var tree []byte
	for name, c := range made {
		data := gitIndex(t, c.steps...)
		switch name {
		case "tree extension":
			require.Contains(t, string(data), "TREE")
			tree = data
		case "end of entries":
			require.Contains(t, string(data), "EOIE")
		case "extended flags":
			require.Contains(t, string(data), "DIRC\x00\x00\x00\x03")
		case "untracked cache":
			require.Contains(t, string(data), "UNTR")
		}
		assertDecodesAsGoGit(t, name, data, c.fast)
	}
	h := plumbing.NewHash("0123456789abcdef0123456789abcdef01234567")
	long, err := encodeWithGoGit(&index.Index{Version: 2, Entries: []*index.Entry{
		{Name: "a", Hash: h, ModifiedAt: time.Unix(1_700_000_000, 5)},
		{Name: strings.Repeat("y/", 2500) + "z", Hash: h, SkipWorktree: true},
		{Name: strings.Repeat("x", 0xfff), Hash: h},
	}})
	require.NoError(t, err)
	invalidated := withExtension(entriesOf(tree), "TREE", []byte("\x00-1 1\nsub\x002 0\n"+string(h[:])))
	altered := map[string]struct {
		data []byte
		fast bool
	}{
		"optional extension":  {withExtension(tree, "ZZZZ", []byte("anything")), true},
		"empty extension":     {withExtension(tree, "Qxyz", nil), true},
		"mandatory extension": {withExtension(tree, "sdir", nil), false},
		"resolve undo":        {withExtension(tree, "REUC", []byte("a.txt\x00100644\x000\x000\x00"+string(h[:]))), false},
		"invalidated tree":    {invalidated, true},
		"bad tree count":      {withExtension(entriesOf(tree), "TREE", []byte("\x00x 1\n")), false},
		"long names":          {long, true},
		"flipped byte":        {flip(tree, 40), false},
		"bad checksum":        {flip(tree, len(tree)-1), false},
		"truncated":           {tree[:len(tree)/2], false},
		"truncated, resummed": {resum(append(bytes.Clone(tree[:len(tree)/2]), make([]byte, 20)...)), false},
		"trailing bytes":      {append(bytes.Clone(tree), 1, 2, 3), false},
		"no entries":          {resum([]byte("DIRC\x00\x00\x00\x02\x00\x00\x00\x00" + strings.Repeat("\x00", 20))), true},
		"version 5":           {resum([]byte("DIRC\x00\x00\x00\x05\x00\x00\x00\x00" + strings.Repeat("\x00", 20))), false},
		"bad signature":       {resum([]byte("DIRX\x00\x00\x00\x02\x00\x00\x00\x00" + strings.Repeat("\x00", 20))), false},
		"huge count":          {resum([]byte("DIRC\x00\x00\x00\x02\xff\xff\xff\xff" + strings.Repeat("\x00", 20))), false},
		"empty file":          {nil, false},
	}
	for name, c := range altered {
		assertDecodesAsGoGit(t, name, c.data, c.fast)
	}
	// A corrupt index gives go-git's error kinds.
	_, err = DecodeIndex(flip(tree, len(tree)-1))
	assert.ErrorIs(t, err, index.ErrInvalidChecksum)
	_, err = DecodeIndex(withExtension(tree, "sdir", nil))
	assert.ErrorIs(t, err, index.ErrUnknownExtension)
}

// entriesOf is an index's header and entries without its extensions, with a
// placeholder checksum (data is a version 2 or 3 index go-git decodes).
func entriesOf(data []byte) []byte {
	idx, err := goGitDecode(data)
	if err != nil {
		panic(err)
	}
	idx.Cache = nil
	out, err := encodeWithGoGit(idx)
	if err != nil {
		panic(err)
	}
	return out
}

// flip returns data with the byte at i changed.
func flip(data []byte, i int) []byte {
	out := bytes.Clone(data)
	out[i] ^= 0x55
	return out
}

// TestReadIndex: ReadIndex reads a git directory's index as go-git's storage does,
// ModTime included, and an empty version 2 index when there is none.
func TestReadIndex(t *testing.T) {
	t.Parallel()
	gd := t.TempDir()
	got, err := ReadIndex(gd)
	require.NoError(t, err)
	assert.Equal(t, &index.Index{Version: 2}, got)
	h := plumbing.NewHash("0123456789abcdef0123456789abcdef01234567")
	want := &index.Index{Version: 2, Entries: []*index.Entry{{Name: "a/b", Hash: h, Mode: 0o100644, Size: 4}}}
	require.NoError(t, WriteIndex(gd, want))
	info, err := os.Stat(filepath.Join(gd, "index"))
	require.NoError(t, err)
	want.ModTime = info.ModTime()
	got, err = ReadIndex(gd)
	require.NoError(t, err)
	assert.Equal(t, want, got)
}

// FuzzDecodeIndex: whatever the bytes, DecodeIndex returns go-git's index and
// error. resummed replaces the checksum, so that mutations get past it.
func FuzzDecodeIndex(f *testing.F) {
	h := plumbing.NewHash("0123456789abcdef0123456789abcdef01234567")
	for _, idx := range []*index.Index{
		{Version: 2, Entries: []*index.Entry{{Name: "a", Hash: h, Size: 1, ModifiedAt: time.Unix(1_700_000_000, 1)}}},
		{Version: 3, Entries: []*index.Entry{{Name: "b/c", Hash: h, IntentToAdd: true}, {Name: "d", Hash: h, SkipWorktree: true}}},
	} {
		data, err := encodeWithGoGit(idx)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, false)
		f.Add(withExtension(data, "TREE", []byte("\x001 0\n"+string(h[:]))), false)
	}
	f.Add([]byte("DIRC"), true)
	f.Fuzz(func(t *testing.T, data []byte, resummed bool) {
		if resummed && len(data) >= 20 {
			data = resum(data)
		}
		want, wantErr := goGitDecode(data)
		got, err := DecodeIndex(data)
		if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
			t.Fatalf("error %v, go-git's %v", err, wantErr)
		}
		if err == nil {
			assert.Equal(t, want, got)
		}
	})
}

// BenchmarkDecodeIndex compares DecodeIndex with go-git's decoder on 20,000 entries.
func BenchmarkDecodeIndex(b *testing.B) {
	idx := &index.Index{Version: 2}
	for i := range 20000 {
		idx.Entries = append(idx.Entries, &index.Entry{Name: fmt.Sprintf("src/pkg%03d/file%05d.go", i/100, i),
			Mode: 0o100644, Size: uint32(i), ModifiedAt: time.Unix(1_700_000_000, int64(i))})
	}
	data, err := encodeIndex(idx)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("ours", func(b *testing.B) {
		for b.Loop() {
			if _, err := DecodeIndex(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("go-git", func(b *testing.B) {
		for b.Loop() {
			if _, err := goGitDecode(data); err != nil {
				b.Fatal(err)
			}
		}
	})
}
