package gitrepo

import (
	"bytes"
	"compress/zlib"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// entryHeader encodes a pack entry's header: type and size, 4 bits then 7 bits a
// byte, the high bit saying another byte follows.
func entryHeader(t plumbing.ObjectType, size int64) []byte {
	b := []byte{byte(t)<<4 | byte(size&15)}
	for size >>= 4; size > 0; size >>= 7 {
		b[len(b)-1] |= 0x80
		b = append(b, byte(size&0x7f))
	}
	return b
}

// A header reads back as written, whatever the size.
func TestEntryHeaderRoundTrip(t *testing.T) {
	for _, size := range []int64{0, 1, 15, 16, 127, 128, 2047, 2048, 1 << 20, 1<<35 + 3} {
		typ, got, err := ReadPackEntryHeader(bytes.NewReader(entryHeader(plumbing.TreeObject, size)))
		require.NoError(t, err, "size %d", size)
		assert.Equal(t, plumbing.TreeObject, typ)
		assert.Equal(t, size, got)
	}
}

// A delta entry is refused with ErrDeltaEntry (go-git reads those); a whole one is
// read, and closing its reader closes what it was opened with.
func TestOpenPackEntryRefusesDeltas(t *testing.T) {
	_, _, _, err := OpenPackEntry(bytes.NewReader(entryHeader(plumbing.OFSDeltaObject, 3)), 0, nil)
	assert.True(t, errors.Is(err, ErrDeltaEntry), "%v", err)
	var b bytes.Buffer
	b.WriteString("junk")
	b.Write(entryHeader(plumbing.CommitObject, 3))
	zw := zlib.NewWriter(&b)
	zw.Write([]byte("abc"))
	zw.Close()
	c := &closeCounter{}
	typ, size, rc, err := OpenPackEntry(bytes.NewReader(b.Bytes()), 4, c)
	require.NoError(t, err)
	assert.Equal(t, plumbing.CommitObject, typ)
	assert.Equal(t, int64(3), size)
	got, err := io.ReadAll(rc)
	require.NoError(t, err)
	assert.Equal(t, "abc", string(got))
	require.NoError(t, rc.Close())
	require.NoError(t, rc.Close())
	assert.Equal(t, 1, c.n)
}

type closeCounter struct{ n int }

func (c *closeCounter) Close() error { c.n++; return nil }

// FuzzReadPackEntry feeds arbitrary bytes to the pack entry reader: an error or an
// object, never a panic or an allocation sized by the header.
func FuzzReadPackEntry(f *testing.F) {
	var blob bytes.Buffer
	blob.Write(entryHeader(plumbing.BlobObject, 5))
	zw := zlib.NewWriter(&blob)
	zw.Write([]byte("hello"))
	zw.Close()
	f.Add(blob.Bytes())
	f.Add(entryHeader(plumbing.OFSDeltaObject, 3))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, data []byte) {
		typ, size, rc, err := OpenPackEntry(bytes.NewReader(data), 0, nil)
		if err != nil {
			return
		}
		defer rc.Close()
		got, _ := io.ReadAll(io.LimitReader(rc, 1<<16))
		if int64(len(got)) > size {
			t.Fatalf("%s entry of %d bytes read %d", typ, size, len(got))
		}
	})
}

// TestPooledEntryReaders: entry readers come from a pool; one closed twice or read
// after its close never hands its state to two readers, and readers reused after a
// damaged entry read the next entry right.
func TestPooledEntryReaders(t *testing.T) {
	t.Parallel()
	entry := func(content string) []byte {
		var b bytes.Buffer
		b.Write(entryHeader(plumbing.BlobObject, int64(len(content))))
		zw := zlib.NewWriter(&b)
		zw.Write([]byte(content))
		zw.Close()
		return b.Bytes()
	}
	damaged := append(entryHeader(plumbing.BlobObject, 4), 0x78, 0x00) // a bad zlib header
	for i := 0; i < 50; i++ {
		_, _, _, err := OpenPackEntry(bytes.NewReader(damaged), 0, nil)
		require.Error(t, err)
		want := strings.Repeat(string(rune('a'+i%26)), 100+i)
		_, size, rc, err := OpenPackEntry(bytes.NewReader(entry(want)), 0, nil)
		require.NoError(t, err)
		got, err := io.ReadAll(rc)
		require.NoError(t, err)
		assert.Equal(t, want, string(got))
		assert.Equal(t, int64(len(want)), size)
		require.NoError(t, rc.Close())
		require.NoError(t, rc.Close())
		n, err := rc.Read(make([]byte, 8))
		assert.Equal(t, 0, n)
		assert.Equal(t, io.EOF, err)
	}
}
