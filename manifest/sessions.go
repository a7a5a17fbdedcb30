package manifest

import (
	"path/filepath"
	"sort"
	"strings"

	"github.com/replaytool/replay/internal/paths"
)

// SessionDir is one pipeline session a scratch directory names, with the
// dispatch directory that holds its manifest.
type SessionDir struct {
	Session string
	Dir     string
	// Marker is set for the session .pipeline-active names.
	Marker bool
}

// Sessions lists every session scratch names, the marker's first, then each
// .dispatch-active-<sid>'s (newest first): two runs of one project (a /build
// and a /debugging run) share the scratch directory. Each comes with the
// directory that holds its manifest: the durable copy in scratch, else the
// directory its file names (validated: inside a temporary root or scratch),
// else its live directory. A session whose manifest is found nowhere, or whose
// id is not one, is left out.
func Sessions(scratch string, opts ResolveOptions) []SessionDir {
	r := resolver{opts: opts}
	var out []SessionDir
	seen := map[string]bool{}
	if loc, err := r.fromScratch(scratch); err == nil && loc.SessionID != "" {
		out = append(out, SessionDir{Session: loc.SessionID, Dir: loc.DispatchDir, Marker: true})
		seen[loc.SessionID] = true
	}
	sids, _ := ReadDispatchActive(scratch)
	sort.SliceStable(sids, func(i, j int) bool { return compareSessions(sids[i], sids[j]) > 0 })
	for _, sid := range sids {
		if seen[sid] || sid == "" || strings.ContainsAny(sid, `/\`) || sid == "." || sid == ".." {
			continue
		}
		seen[sid] = true
		if dir, ok := r.sessionDir(scratch, sid); ok {
			out = append(out, SessionDir{Session: sid, Dir: dir})
		}
	}
	return out
}

// sessionDir finds the dispatch directory with the manifest of session sid,
// named by scratch's .dispatch-active-<sid>.
func (r resolver) sessionDir(scratch, sid string) (string, bool) {
	file := filepath.Join(scratch, DispatchActivePrefix+sid)
	candidates := []string{paths.DurableDispatchDir(scratch, sid), filepath.Join(scratch, "dispatch-"+sid)}
	if named := dispatchActiveDir(file); named != "" {
		dir, err := ValidateDispatchDir(file, named, append(r.tmpRoots(), scratch)...)
		if err != nil {
			return "", false
		}
		candidates = append(candidates, dir)
	} else {
		for _, root := range r.tmpRoots() {
			candidates = append(candidates, paths.LiveDispatchDir(root, sid))
		}
	}
	for _, dir := range candidates {
		if isFile(filepath.Join(dir, ManifestFile)) {
			return dir, true
		}
	}
	return "", false
}
