package gitrepo

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/internal/testkit/gitcheck"
	"github.com/replaytool/replay/internal/testkit/testtools"
)

func TestPackEntryHeaderRoundTrip(t *testing.T) {
	t.Parallel()
	for _, size := range []int64{0, 1, 15, 16, 127, 128, 2047, 2048, 1 << 20, 1<<35 + 3} {
		h := AppendPackEntryHeader(nil, plumbing.BlobObject, size)
		typ, got, err := ReadPackEntryHeader(bytes.NewReader(h))
		require.NoError(t, err, "size %d", size)
		assert.Equal(t, plumbing.BlobObject, typ)
		assert.Equal(t, size, got)
	}
}

// packObjects is a few objects of every whole type, empty and large ones among them.
func packObjects() []plumbing.MemoryObject {
	var objs []plumbing.MemoryObject
	add := func(t plumbing.ObjectType, data []byte) {
		var o plumbing.MemoryObject
		o.SetType(t)
		o.Write(data)
		objs = append(objs, o)
	}
	add(plumbing.BlobObject, nil)
	add(plumbing.BlobObject, bytes.Repeat([]byte("a large blob, streamed through the copy buffer\n"), 5000))
	for i := range 40 {
		add(plumbing.BlobObject, []byte(fmt.Sprintf("blob %d\n", i)))
	}
	add(plumbing.TreeObject, append([]byte("100644 f\x00"), func() []byte { h := objs[2].Hash(); return h[:] }()...))
	add(plumbing.CommitObject, []byte("tree "+objs[len(objs)-1].Hash().String()+"\nauthor a <a@a> 1 +0000\ncommitter a <a@a> 1 +0000\n\nm\n"))
	return objs
}

// indexPack stores pack in the repository at dir with `git index-pack`, which
// checks every entry and the checksum, then checks the repository with git and
// go-git and that go-git reads every object back.
func indexPack(t *testing.T, dir string, pack []byte, objs []plumbing.MemoryObject) {
	t.Helper()
	gitBin := testtools.Git(t, "the pack is checked by git index-pack")
	cmd := exec.Command(gitBin, "index-pack", "--strict", "--stdin")
	cmd.Dir, cmd.Stdin = dir, bytes.NewReader(pack)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git index-pack: %s", out)
	gitcheck.Repo(t, dir)
	repo, err := git.PlainOpen(dir)
	require.NoError(t, err)
	for i := range objs {
		o, err := repo.Storer.EncodedObject(plumbing.AnyObject, objs[i].Hash())
		require.NoError(t, err, "object %d", i)
		r, err := o.Reader()
		require.NoError(t, err)
		got, err := io.ReadAll(r)
		require.NoError(t, err)
		assert.Equal(t, content(t, &objs[i]), got, "object %d", i)
	}
}

// content returns the content of o.
func content(t *testing.T, o *plumbing.MemoryObject) []byte {
	t.Helper()
	r, err := o.Reader()
	require.NoError(t, err)
	data, err := io.ReadAll(r)
	require.NoError(t, err)
	return data
}

// TestPackWriterReadByGit: a pack streamed by PackWriter is indexed by git, and
// git and go-git read every object of it.
func TestPackWriterReadByGit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, err := git.PlainInit(dir, false)
	require.NoError(t, err)
	objs := packObjects()
	var buf bytes.Buffer
	pw, err := NewPackWriter(&buf, uint32(len(objs)))
	require.NoError(t, err)
	for i := range objs {
		require.NoError(t, pw.WriteObject(objs[i].Type(), objs[i].Size(), bytes.NewReader(content(t, &objs[i]))))
	}
	require.NoError(t, pw.Close())
	indexPack(t, dir, buf.Bytes(), objs)
}

// TestFinishPackReadByGit: a pack of EncodePackEntry entries written with a count
// of 0 and completed by FinishPack is indexed by git, and read by git and go-git.
func TestFinishPackReadByGit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, err := git.PlainInit(dir, false)
	require.NoError(t, err)
	objs := packObjects()
	f, err := os.Create(filepath.Join(t.TempDir(), "body"))
	require.NoError(t, err)
	defer f.Close()
	h := PackHeader(0)
	body := bytes.NewBuffer(h[:])
	for i := range objs {
		require.NoError(t, EncodePackEntry(body, objs[i].Type(), content(t, &objs[i])))
	}
	_, err = f.Write(body.Bytes())
	require.NoError(t, err)
	_, err = FinishPack(f, uint32(len(objs)), int64(body.Len()), make([]byte, 4096))
	require.NoError(t, err)
	pack, err := os.ReadFile(f.Name())
	require.NoError(t, err)
	indexPack(t, dir, pack, objs)
}

// TestPackWriterRefusesWrongCounts: a pack holds exactly the objects its header
// counts, and only whole types, and an object is exactly its size.
func TestPackWriterRefusesWrongCounts(t *testing.T) {
	t.Parallel()
	pw, err := NewPackWriter(io.Discard, 1)
	require.NoError(t, err)
	assert.ErrorContains(t, pw.Close(), "0 written")
	assert.ErrorContains(t, pw.WriteObject(plumbing.OFSDeltaObject, 1, strings.NewReader("x")), "cannot be packed whole")
	assert.ErrorContains(t, pw.WriteObject(plumbing.BlobObject, 2, strings.NewReader("x")), "read 1 bytes of 2")
	pw, err = NewPackWriter(io.Discard, 1)
	require.NoError(t, err)
	assert.ErrorContains(t, pw.WriteObject(plumbing.BlobObject, 1, strings.NewReader("xy")), "read 2 bytes of 1")
	pw, err = NewPackWriter(io.Discard, 1)
	require.NoError(t, err)
	require.NoError(t, pw.WriteObject(plumbing.BlobObject, 1, strings.NewReader("x")))
	assert.ErrorContains(t, pw.WriteObject(plumbing.BlobObject, 1, strings.NewReader("x")), "one more written")
	assert.NoError(t, pw.Close())
}
