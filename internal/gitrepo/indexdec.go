package gitrepo

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// indexTrailerLen is the SHA-1 checksum closing an index file.
const indexTrailerLen = sha1.Size

// ReadIndex reads the index file of the git directory gitDir as go-git's
// IndexStorage.Index does: an empty version 2 index when there is none, ModTime
// from the file's stat data, and the same entries, extensions and errors.
func ReadIndex(gitDir string) (*index.Index, error) {
	idx := &index.Index{Version: 2}
	f, err := os.Open(filepath.Join(gitDir, "index"))
	if err != nil {
		if os.IsNotExist(err) {
			return idx, nil
		}
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.Grow(int(info.Size()) + bytes.MinRead)
	if _, err := buf.ReadFrom(f); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	got, err := DecodeIndex(data)
	if got != nil {
		got.ModTime = info.ModTime()
	}
	return got, err
}

// DecodeIndex decodes the bytes of an index file into what go-git's index.Decoder
// makes of them. A well-formed version 2 or 3 index (entries, TREE and EOIE
// extensions, optional extensions skipped) is decoded here in one pass over the
// bytes, about ten times faster than go-git's decoder, which reads every field
// through a reader and a hash; anything else (version 4, a resolve-undo
// extension, a corrupt or truncated file, a mandatory extension go-git refuses)
// goes to go-git's decoder, so the result and the error are go-git's.
func DecodeIndex(data []byte) (*index.Index, error) {
	if idx, ok := decodePlainIndex(data); ok {
		return idx, nil
	}
	idx := &index.Index{Version: 2}
	err := index.NewDecoder(bytes.NewReader(data)).Decode(idx)
	return idx, err
}

// decodePlainIndex decodes a well-formed version 2 or 3 index; ok is false for
// anything it leaves to go-git.
func decodePlainIndex(data []byte) (idx *index.Index, ok bool) {
	if len(data) < 12+indexTrailerLen || string(data[:4]) != "DIRC" {
		return nil, false
	}
	body := data[:len(data)-indexTrailerLen]
	if sum := sha1.Sum(body); !bytes.Equal(sum[:], data[len(body):]) {
		return nil, false
	}
	idx = &index.Index{Version: binary.BigEndian.Uint32(data[4:])}
	if idx.Version != 2 && idx.Version != 3 {
		return nil, false
	}
	pos, ok := decodeEntries(idx, body)
	if !ok {
		return nil, false
	}
	// go-git reads an extension while at least a header and the checksum follow.
	for len(data)-pos >= 8+indexTrailerLen {
		sig, n := body[pos:pos+4], binary.BigEndian.Uint32(body[pos+4:])
		pos += 8
		if uint64(n) > uint64(len(body)-pos) {
			return nil, false
		}
		if !decodeExtension(idx, string(sig), body[pos:pos+int(n)]) {
			return nil, false
		}
		pos += int(n)
	}
	return idx, pos == len(body)
}

// decodeEntries decodes the entries of a version 2 or 3 index, as go-git does,
// and returns the offset after them.
func decodeEntries(idx *index.Index, body []byte) (int, bool) {
	count := uint64(binary.BigEndian.Uint32(body[8:]))
	pos := 12
	if count*(entryFixedLen+2) > uint64(len(body)-pos) {
		return 0, false // each entry takes at least its fixed part and padding
	}
	if count == 0 {
		return pos, true // go-git leaves Entries nil
	}
	// The names are cut from one copy of the bytes and the entries from one slice:
	// two allocations instead of two per entry.
	text := string(body)
	entries := make([]index.Entry, count)
	idx.Entries = make([]*index.Entry, count)
	for i := range entries {
		e := &entries[i]
		idx.Entries[i] = e
		next, ok := decodeEntry(e, body, text, pos)
		if !ok {
			return 0, false
		}
		pos = next
	}
	return pos, true
}

// decodeEntry decodes the entry at pos of a version 2 or 3 index into e and
// returns the offset of the next one.
func decodeEntry(e *index.Entry, body []byte, text string, pos int) (int, bool) {
	if len(body)-pos < entryFixedLen {
		return 0, false
	}
	u32 := func(i int) uint32 { return binary.BigEndian.Uint32(body[pos+4*i:]) }
	if sec, nsec := u32(0), u32(1); sec != 0 || nsec != 0 {
		e.CreatedAt = time.Unix(int64(sec), int64(nsec))
	}
	if sec, nsec := u32(2), u32(3); sec != 0 || nsec != 0 {
		e.ModifiedAt = time.Unix(int64(sec), int64(nsec))
	}
	e.Dev, e.Inode, e.Mode, e.UID, e.GID, e.Size = u32(4), u32(5), filemode.FileMode(u32(6)), u32(7), u32(8), u32(9)
	copy(e.Hash[:], body[pos+40:pos+60])
	flags := binary.BigEndian.Uint16(body[pos+60:])
	e.Stage = index.Stage(flags>>12) & 0x3
	read := entryFixedLen
	if flags&entryExtended != 0 {
		if len(body)-pos < entryFixedLen+2 {
			return 0, false
		}
		ext := binary.BigEndian.Uint16(body[pos+entryFixedLen:])
		e.IntentToAdd = ext&intentToAddFlag != 0
		e.SkipWorktree = ext&skipWorktreeFlag != 0
		read += 2
	}
	start := pos + read
	nameLen, consumed := int(flags&entryNameMask), 0
	if nameLen == entryNameMask {
		// A name of 0xfff bytes or more ends at a NUL, which counts in the padding.
		n := bytes.IndexByte(body[start:], 0)
		if n < 0 {
			return 0, false
		}
		nameLen, consumed = n, n+1
	} else {
		if len(body)-start < nameLen {
			return 0, false
		}
		consumed = nameLen
	}
	e.Name = text[start : start+nameLen]
	// go-git's padding: 8 - (fixed part + name) % 8 bytes, less the NUL of a long name.
	pad := 8 - (read+nameLen)%8 - (consumed - nameLen)
	next := start + consumed + max(pad, 0)
	if next > len(body) {
		return 0, false
	}
	return next, true
}

// decodeExtension decodes the extension sig whose bytes are data into idx; it is
// false for what go-git decodes differently or refuses.
func decodeExtension(idx *index.Index, sig string, data []byte) bool {
	switch sig {
	case "TREE":
		tree, ok := decodeTreeExtension(data)
		idx.Cache = tree
		return ok
	case "EOIE":
		if len(data) != 4+20 {
			return false
		}
		idx.EndOfIndexEntry = &index.EndOfIndexEntry{Offset: binary.BigEndian.Uint32(data)}
		copy(idx.EndOfIndexEntry.Hash[:], data[4:])
		return true
	case "REUC":
		return false // resolve-undo: rare, left to go-git
	}
	// Optional extensions (a first letter A to Z) are skipped, others refused.
	return sig[0] >= 'A' && sig[0] <= 'Z'
}

// decodeTreeExtension decodes a well-formed TREE extension: per directory its
// path, NUL, entry count, space, subtree count, newline and, unless the count is
// negative (an invalidated directory, left out), the tree's hash.
func decodeTreeExtension(data []byte) (*index.Tree, bool) {
	tree := &index.Tree{}
	for len(data) > 0 {
		var e index.TreeEntry
		path, rest, ok := bytes.Cut(data, []byte{0})
		if !ok {
			return nil, false
		}
		count, rest, ok := bytes.Cut(rest, []byte{' '})
		if !ok {
			return nil, false
		}
		trees, rest, ok := bytes.Cut(rest, []byte{'\n'})
		if !ok {
			return nil, false
		}
		var err1, err2 error
		e.Path = string(path)
		e.Entries, err1 = strconv.Atoi(string(count))
		e.Trees, err2 = strconv.Atoi(string(trees))
		if err1 != nil || err2 != nil {
			return nil, false
		}
		if e.Entries >= 0 {
			if len(rest) < 20 {
				return nil, false
			}
			copy(e.Hash[:], rest)
			rest = rest[20:]
			tree.Entries = append(tree.Entries, e)
		}
		data = rest
	}
	return tree, true
}
