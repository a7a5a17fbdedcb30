package pipeline

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/replaytool/replay/internal/paths"
	"github.com/replaytool/replay/manifest"
)

// otherCopies returns the run's other dispatch directories that exist: the live
// one the marker names (validated: inside the scratch dir or a temporary root) and
// the durable copies in the scratch dir, without the one Load read.
func (pl *Pipeline) otherCopies(tmp string) []string {
	var dirs []string
	add := func(dir string) {
		if dir == "" || filepath.Clean(dir) == filepath.Clean(pl.DispatchDir) {
			return
		}
		for _, d := range dirs {
			if d == dir {
				return
			}
		}
		if names, err := manifest.ListNames(dir); err == nil && len(names) > 0 {
			dirs = append(dirs, dir)
		}
	}
	if pl.Marker != nil && pl.Marker.DispatchDir != "" && pl.ScratchDir != "" {
		markerPath := filepath.Join(pl.ScratchDir, manifest.MarkerFile)
		if live, err := manifest.ValidateDispatchDir(markerPath, pl.Marker.DispatchDir, pl.ScratchDir, tmp, pl.SysTmp); err == nil {
			add(live)
		}
	}
	if sid := pl.Location.SessionID; sid != "" && pl.ScratchDir != "" && !strings.ContainsAny(sid, `/\`) {
		add(paths.DurableDispatchDir(pl.ScratchDir, sid))
		add(filepath.Join(pl.ScratchDir, "dispatch-"+sid))
	}
	return dirs
}

// mergeCopies reads the manifests of the run's other dispatch directories (a live
// directory that moved on after the durable copy was taken, or a durable copy
// newer than a live one) and, where they record more of a seq than the manifest
// Load read, takes that seq's entry and history from them, with a warning naming
// both directories. Every seq any of them uses counts for the next seq.
func (pl *Pipeline) mergeCopies(tmp string) {
	pl.copies = pl.otherCopies(tmp)
	for _, dir := range pl.copies {
		path := filepath.Join(dir, manifest.ManifestFile)
		other, err := manifest.Read(path)
		if err != nil {
			continue
		}
		pl.copyMax = max(pl.copyMax, other.MaxSeq)
		taken := mergeManifest(pl.Manifest, other)
		if len(taken) == 0 {
			if other.MaxSeq > pl.Manifest.MaxSeq {
				pl.Warn("%s uses seqs up to %d, beyond %s (up to %d): new seqs start above both", path, other.MaxSeq, pl.Location.ManifestPath, pl.Manifest.MaxSeq)
			}
			continue
		}
		for _, w := range other.Warnings {
			pl.Warnings = append(pl.Warnings, fmt.Sprintf("%s: %s", path, w))
		}
		pl.Warn("the dispatch directories %s and %s disagree: %s records more of seqs %s, so both are read, each seq from the one that records more of it; new seqs start above every seq of either",
			pl.DispatchDir, dir, path, seqRanges(taken))
	}
}

// mergeManifest takes into m every seq other records more lines of (a longer
// status history), returning those seqs ascending.
func mergeManifest(m, other *manifest.Manifest) []int {
	at := make(map[int]int, len(m.Entries))
	for i, e := range m.Entries {
		at[e.Seq] = i
	}
	var taken []int
	for _, e := range other.Entries {
		i, ok := at[e.Seq]
		if ok && len(other.History[e.Seq]) <= len(m.History[e.Seq]) {
			continue
		}
		if ok {
			m.Entries[i] = e
		} else {
			m.Entries = append(m.Entries, e)
		}
		if m.History == nil {
			m.History = map[int][]manifest.Status{}
		}
		m.History[e.Seq] = other.History[e.Seq]
		taken = append(taken, e.Seq)
	}
	if len(taken) > 0 {
		sort.SliceStable(m.Entries, func(i, j int) bool { return m.Entries[i].Seq < m.Entries[j].Seq })
	}
	m.MaxSeq = max(m.MaxSeq, other.MaxSeq)
	sort.Ints(taken)
	return taken
}

// seqRanges writes ascending seqs as ranges: "4-9, 12".
func seqRanges(seqs []int) string {
	var parts []string
	for i := 0; i < len(seqs); {
		j := i
		for j+1 < len(seqs) && seqs[j+1] == seqs[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", seqs[i], seqs[j]))
		} else {
			parts = append(parts, fmt.Sprint(seqs[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// nextSeq is one above every seq the run used: manifest.NextSeq of the dispatch
// directory (without reading the manifest again when it is the one Load read),
// the merged manifest, the other copies and every dispatch file name.
func (pl *Pipeline) nextSeq() (int, error) {
	var next int
	var err error
	if pl.Location.ManifestPath == filepath.Join(pl.DispatchDir, manifest.ManifestFile) {
		next, err = manifest.NextSeqAfter(pl.Manifest, pl.DispatchDir)
	} else {
		next, err = manifest.NextSeq(pl.DispatchDir)
	}
	if err != nil {
		return 0, err
	}
	// One above every seq used anywhere: the manifest read (merged), the other
	// copies' manifests and the file names of every directory read.
	next = max(next, pl.Manifest.MaxSeq+1, pl.copyMax+1)
	for seq := range pl.Files {
		next = max(next, seq+1)
	}
	for _, dir := range pl.copies {
		if n, err := manifest.NextSeqAfter(&manifest.Manifest{}, dir); err == nil {
			next = max(next, n)
		}
	}
	return next, nil
}
