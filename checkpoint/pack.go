package checkpoint

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"

	"github.com/replaytool/replay/internal/gitrepo"
)

// A snapshot stores its new small objects in one packfile (version 2, every entry
// whole, no deltas) with its .idx, instead of one loose file each: a 1,000-file
// change is then two files instead of a thousand creates and renames. Objects are
// appended to a temporary body file as they are written (so a first checkpoint of
// a large tree needs no memory for them); finishPack writes the pack header, the
// body and the checksum into a temporary pack, the index into a temporary index,
// syncs both and renames the index first and the pack last. Both git and go-git
// only use a pack whose .pack and .idx both exist (git lists the indexes and skips
// one without its pack; go-git lists the packs and fails on one without its
// index), so a crash at any point leaves a readable repository, with at most an
// unused temporary file or index. Nothing refers to the new objects until the
// pack is complete: the caller moves a ref or saves the stat cache only after
// finishPack returned.
const (
	// packMinObjects is the fewest objects worth a pack: a smaller batch is
	// written as loose objects (fewer files and no syncs).
	packMinObjects = 32
	// maxPacks bounds the packs of a shadow repository: when it has that many, new
	// snapshots write loose objects again, as before packs were written; a `git gc`
	// of the shadow repository folds them into one.
	maxPacks = 50
)

// packFile is one pack of the repository and its decoded index, and the pack file
// while it is open (see packopen.go).
type packFile struct {
	path string // the .pack file
	idx  packIndex

	fmu   sync.Mutex // guards f, users and kept
	f     *os.File   // open while a reader uses it or the store keeps it open
	users int        // readers of f not yet closed
	kept  bool       // keepPacksOpen holds f open between reads
}

// packEntry is where a pending object sits in the body of the batch.
type packEntry struct {
	off int64
	crc uint32
}

// packBatch collects the objects of one snapshot before they become a pack.
type packBatch struct {
	f       *os.File
	w       *bufio.Writer
	off     int64
	entries map[plumbing.Hash]packEntry
	order   []plumbing.Hash
}

// loadPacks reads the index of every pack once (the packs whose .pack exists, like
// git) and returns them.
func (o *objectStore) loadPacks() []*packFile {
	o.packMu.RLock()
	if o.packsLoaded {
		defer o.packMu.RUnlock()
		return o.packList
	}
	o.packMu.RUnlock()
	o.packMu.Lock()
	defer o.packMu.Unlock()
	if o.packsLoaded {
		return o.packList
	}
	o.packsLoaded = true
	matches, _ := filepath.Glob(filepath.Join(o.dir, "pack", "pack-*.idx"))
	for _, idxPath := range matches {
		packPath := strings.TrimSuffix(idxPath, ".idx") + ".pack"
		if _, err := os.Stat(packPath); err != nil {
			continue
		}
		idx, err := openIdx(idxPath)
		if err != nil {
			continue // an unreadable index: its objects count as missing and are written again
		}
		o.packList = append(o.packList, &packFile{path: packPath, idx: idx})
	}
	return o.packList
}

// inPacks reports whether a pack holds h, and which one.
func (o *objectStore) inPacks(h plumbing.Hash) (*packFile, int64, bool) {
	for _, p := range o.loadPacks() {
		if off, err := p.idx.FindOffset(h); err == nil {
			return p, off, true
		}
	}
	return nil, 0, false
}

// beginPack starts collecting the small objects written from now on into one pack.
// It does nothing when a batch is open already or the repository has maxPacks packs.
func (o *objectStore) beginPack() error {
	o.batchMu.Lock()
	defer o.batchMu.Unlock()
	if o.batch != nil || len(o.loadPacks()) >= maxPacks {
		return nil
	}
	dir := filepath.Join(o.dir, "pack")
	if err := o.ensureDir(dir); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "tmp_pack_")
	if err != nil {
		return fmt.Errorf("starting a pack in %s: %w", dir, err)
	}
	// The header, its object count filled in by writePack.
	b := &packBatch{f: f, w: bufio.NewWriterSize(f, streamBuf), entries: map[plumbing.Hash]packEntry{}, off: gitrepo.PackHeaderSize}
	header := gitrepo.PackHeader(0)
	b.w.Write(header[:])
	o.batch = b
	return nil
}

// dropPack forgets an unfinished batch and removes its temporary file; its objects
// were never referred to.
func (o *objectStore) dropPack() {
	o.batchMu.Lock()
	b := o.batch
	o.batch = nil
	o.batchMu.Unlock()
	if b != nil {
		b.f.Close()
		//replay:door the temp pack file this process created
		os.Remove(b.f.Name())
	}
}

// pending reports whether the open batch holds h.
func (o *objectStore) pending(h plumbing.Hash) bool {
	o.batchMu.Lock()
	defer o.batchMu.Unlock()
	if o.batch == nil {
		return false
	}
	_, ok := o.batch.entries[h]
	return ok
}

// addToBatch appends object h to the open batch; false when no batch is open.
func (o *objectStore) addToBatch(h plumbing.Hash, t plumbing.ObjectType, data []byte) (bool, error) {
	o.batchMu.Lock()
	open := o.batch != nil
	o.batchMu.Unlock()
	if !open {
		return false, nil
	}
	var buf bytes.Buffer
	buf.Grow(len(data)/2 + 64)
	if err := gitrepo.EncodePackEntry(&buf, t, data); err != nil {
		return true, fmt.Errorf("compressing object %s: %w", h, err)
	}
	crc := crc32.ChecksumIEEE(buf.Bytes())
	o.batchMu.Lock()
	defer o.batchMu.Unlock()
	b := o.batch
	if b == nil {
		return false, nil
	}
	if _, ok := b.entries[h]; ok {
		return true, nil
	}
	if _, err := b.w.Write(buf.Bytes()); err != nil {
		return true, fmt.Errorf("writing object %s into %s: %w", h, b.f.Name(), err)
	}
	b.entries[h] = packEntry{off: b.off, crc: crc}
	b.order = append(b.order, h)
	b.off += int64(buf.Len())
	return true, nil
}

// openPending returns a reader of object h from the open batch.
func (o *objectStore) openPending(h plumbing.Hash) (plumbing.ObjectType, int64, io.ReadCloser, bool, error) {
	o.batchMu.Lock()
	b := o.batch
	var e packEntry
	ok := false
	var err error
	if b != nil {
		if e, ok = b.entries[h]; ok {
			err = b.w.Flush()
		}
	}
	o.batchMu.Unlock()
	if !ok || err != nil {
		return 0, 0, nil, ok, err
	}
	t, size, rc, err := gitrepo.OpenPackEntry(b.f, e.off, nil)
	return t, size, rc, true, err
}

// openPacked returns a reader of object h from one of the packs; ok is false when
// no pack holds it or its entry is a delta.
func (o *objectStore) openPacked(h plumbing.Hash) (plumbing.ObjectType, int64, io.ReadCloser, bool, error) {
	p, off, ok := o.inPacks(h)
	if !ok {
		return 0, 0, nil, false, nil
	}
	f, err := p.acquire()
	if err != nil {
		return 0, 0, nil, false, nil
	}
	t, size, rc, err := gitrepo.OpenPackEntry(f, off, packUse{p})
	if errors.Is(err, gitrepo.ErrDeltaEntry) {
		p.release()
		return 0, 0, nil, false, nil
	}
	if err != nil {
		p.release()
		return 0, 0, nil, true, fmt.Errorf("object %s in %s is damaged: %w", h, p.path, err)
	}
	return t, size, rc, true, nil
}

// finishPack ends the open batch: its objects become a pack and its index (or
// loose objects when there are fewer than packMinObjects), durable on return.
func (o *objectStore) finishPack() error {
	o.batchMu.Lock()
	b := o.batch
	if b != nil {
		if err := b.w.Flush(); err != nil {
			o.batchMu.Unlock()
			o.dropPack()
			return fmt.Errorf("writing %s: %w", b.f.Name(), err)
		}
	}
	o.batchMu.Unlock()
	if b != nil {
		defer o.dropPack()
		var err error
		switch {
		case len(b.order) == 0:
		case len(b.order) < packMinObjects:
			err = o.batchToLoose(b)
		default:
			err = o.writePack(b)
		}
		if err != nil {
			return err
		}
	}
	return o.syncLoose() // a small batch's objects, and large files streamed beside a pack
}

// batchToLoose writes the objects of a small batch as loose objects.
func (o *objectStore) batchToLoose(b *packBatch) error {
	for _, h := range b.order {
		t, size, rc, err := gitrepo.OpenPackEntry(b.f, b.entries[h].off, nil)
		if err != nil {
			return fmt.Errorf("reading object %s back from %s: %w", h, b.f.Name(), err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err == nil && int64(len(data)) != size {
			err = io.ErrUnexpectedEOF
		}
		if err != nil {
			return fmt.Errorf("reading object %s back from %s: %w", h, b.f.Name(), err)
		}
		if _, err := o.writeLoose(h, t, data); err != nil {
			return err
		}
	}
	return nil
}

// writePack writes the batch as pack-<checksum>.pack and .idx (see the comment at
// the top of this file for the order) and makes the store see the new pack.
func (o *objectStore) writePack(b *packBatch) error {
	dir := filepath.Join(o.dir, "pack")
	tmp := b.f
	tmpIdx := ""
	defer func() {
		if tmpIdx != "" {
			//replay:door the temp index file this process created
			os.Remove(tmpIdx)
		}
	}()
	// The batch's file is the pack: its count goes into the header, and the
	// checksum of everything is read back (from the page cache) and appended.
	bufp := bufPool.Get().(*[]byte)
	checksum, err := gitrepo.FinishPack(tmp, uint32(len(b.order)), b.off, *bufp)
	bufPool.Put(bufp)
	if err != nil {
		return fmt.Errorf("writing a pack into %s: %w", dir, err)
	}
	if err := syncClose(tmp, nil); err != nil {
		return fmt.Errorf("writing a pack into %s: %w", dir, err)
	}
	idx, err := batchIndex(b, checksum)
	if err != nil {
		return err
	}
	if tmpIdx, err = writeIdxFile(dir, idx); err != nil {
		return err
	}
	base := filepath.Join(dir, "pack-"+checksum.String())
	//replay:door installs a pack index this process wrote, inside the proved shadow
	if err := os.Rename(tmpIdx, base+".idx"); err != nil {
		return fmt.Errorf("writing a pack into %s: %w", dir, err)
	}
	tmpIdx = ""
	if o.afterIdx != nil {
		if err := o.afterIdx(); err != nil {
			return err
		}
	}
	//replay:door installs a pack this process wrote, inside the proved shadow
	if err := os.Rename(tmp.Name(), base+".pack"); err != nil {
		return fmt.Errorf("writing a pack into %s: %w", dir, err)
	}
	syncDir(dir)
	o.packMu.Lock()
	o.packList = append(o.packList, &packFile{path: base + ".pack", idx: idx})
	o.packMu.Unlock()
	o.mu.Lock()
	o.st.ObjectStorage.Reindex()
	o.mu.Unlock()
	return nil
}

// syncClose writes tail, syncs and closes f, read-only like git's packs.
func syncClose(f *os.File, tail []byte) error {
	if _, err := f.Write(tail); err != nil {
		return err
	}
	if err := f.Chmod(0o444); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	return f.Close()
}

// batchIndex builds the index of the batch's pack, whose checksum is checksum.
func batchIndex(b *packBatch, checksum plumbing.Hash) (*idxfile.MemoryIndex, error) {
	w := new(idxfile.Writer)
	if err := w.OnHeader(uint32(len(b.order))); err != nil {
		return nil, err
	}
	for _, h := range b.order {
		e := b.entries[h]
		w.Add(h, uint64(e.off), e.crc)
	}
	if err := w.OnFooter(checksum); err != nil {
		return nil, fmt.Errorf("indexing pack %s: %w", checksum, err)
	}
	return w.Index()
}

// writeIdxFile writes idx to a synced temporary file in dir and returns its name.
func writeIdxFile(dir string, idx *idxfile.MemoryIndex) (string, error) {
	f, err := os.CreateTemp(dir, "tmp_idx_")
	if err != nil {
		return "", fmt.Errorf("writing a pack index into %s: %w", dir, err)
	}
	bw := bufio.NewWriterSize(f, streamBuf)
	_, err = idxfile.NewEncoder(bw).Encode(idx)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = syncClose(f, nil)
	}
	if err != nil {
		f.Close()
		//replay:door the temp file this process created
		os.Remove(f.Name())
		return "", fmt.Errorf("writing a pack index into %s: %w", dir, err)
	}
	return f.Name(), nil
}

// syncDir syncs a directory so renames in it survive a crash; best effort.
func syncDir(dir string) {
	//replay:door a directory opened to fsync it, nothing read
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
