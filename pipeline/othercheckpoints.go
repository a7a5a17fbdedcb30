package pipeline

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/replaytool/replay/manifest"
)

// scopeOtherSessions moves to ForeignCheckpoints the checkpoints another
// session of the project took: two runs of one project (a /build and a
// /debugging run, issue 36) share the scratch directory and the one shadow
// repository, so the other run's checkpoints are taken during this run's life
// and the time alone does not tell them apart. The checkpoint names the skill
// that took it (its source, `<reason> | <time> | <skill>`); one whose skill is
// not this run's (its marker's, or any its dispatch headers name: a sub-skill
// such as quality-gate writes into its parent's dispatch dir under its own
// name) and is the skill another session's dispatch headers name, is that
// session's. Its tree holds this run's files of that instant beside the other
// run's, and nothing of this run happened at it: it proves no boundary of this
// run (a generic profile would take its reason as one, seed 7532) and is never
// restored by the decision. A run that names no skill keeps every checkpoint:
// nothing says which are not its own.
func (pl *Pipeline) scopeOtherSessions() {
	if len(pl.Checkpoints) == 0 || pl.ScratchDir == "" {
		return
	}
	own := pl.ownSkills()
	if len(own) == 0 {
		return
	}
	unowned := false
	for _, cp := range pl.Checkpoints {
		if s := strings.TrimSpace(cp.Source); s != "" && !own[s] {
			unowned = true
			break
		}
	}
	if !unowned {
		return // the common case: no other session's dispatch dir is read
	}
	others := pl.otherSessionSkills(own)
	if len(others) == 0 {
		return
	}
	kept := pl.Checkpoints[:0:0]
	var moved []CheckpointRef
	for _, cp := range pl.Checkpoints {
		if _, ok := others[strings.TrimSpace(cp.Source)]; ok {
			moved = append(moved, cp)
			pl.ForeignCheckpoints = append(pl.ForeignCheckpoints, cp)
			continue
		}
		kept = append(kept, cp)
	}
	if len(moved) == 0 {
		return
	}
	pl.Checkpoints = kept
	sort.SliceStable(moved, func(i, j int) bool { return moved[i].Time.After(moved[j].Time) })
	var list []string
	for _, cp := range moved[:min(len(moved), maxNamedForeign)] {
		list = append(list, fmt.Sprintf("%s (session %s)", DescribeForeign(cp), others[strings.TrimSpace(cp.Source)]))
	}
	more := ""
	if n := len(moved) - maxNamedForeign; n > 0 {
		more = fmt.Sprintf(" and %d more", n)
	}
	pl.Warn("%d checkpoints of another session of this project are not candidates for this run's resume point: taken by a skill this run's marker and dispatch files do not name (%s) and another session's dispatch files do, newest first: %s%s",
		len(moved), strings.Join(slices.Sorted(maps.Keys(own)), ", "), strings.Join(list, "; "), more)
}

// ownSkills are the skills this run names: its marker's (when the marker is
// this run's) and its dispatch headers' **Pipeline:** fields.
func (pl *Pipeline) ownSkills() map[string]bool {
	own := map[string]bool{}
	if m := pl.Marker; m != nil && strings.TrimSpace(m.Skill) != "" && pl.markerIsOwn() {
		own[strings.TrimSpace(m.Skill)] = true
	}
	for _, d := range pl.Dispatches {
		if s := strings.TrimSpace(d.Pipeline); s != "" {
			own[s] = true
		}
	}
	return own
}

// markerIsOwn reports whether the marker names this run's session (by its
// pipeline_id, else its dispatch_dir); true when the run has no session id.
func (pl *Pipeline) markerIsOwn() bool {
	sid := pl.Location.SessionID
	if sid == "" {
		return true
	}
	if pl.Marker.PipelineID != "" {
		return pl.Marker.PipelineID == sid
	}
	msid, ok := manifest.SessionOfDir(pl.Marker.DispatchDir)
	return !ok || msid == sid
}

// otherSessionSkills maps each skill the dispatch headers of another session of
// the scratch directory name, and this run does not (own), to that session's
// id. Their files are read, never written.
func (pl *Pipeline) otherSessionSkills(own map[string]bool) map[string]string {
	out := map[string]string{}
	for _, s := range manifest.Sessions(pl.ScratchDir, pl.resolve) {
		if s.Session == pl.Location.SessionID || filepath.Clean(s.Dir) == filepath.Clean(pl.DispatchDir) {
			continue
		}
		files, err := manifest.ReadDispatchDir(s.Dir)
		if err != nil {
			continue
		}
		for _, f := range files {
			if f.Kind != manifest.KindDispatch || f.Header == nil {
				continue
			}
			if sk := strings.TrimSpace(f.Header.Pipeline); sk != "" && !own[sk] {
				if _, seen := out[sk]; !seen {
					out[sk] = s.Session
				}
			}
		}
	}
	return out
}
