package pipeline

import (
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/replaytool/replay/internal/runfile"
	"github.com/replaytool/replay/manifest"
)

// OtherDispatch is a dispatch of another session of the same project: another
// run (a /debugging run beside a /build run) whose files share the scratch
// directory. A commit inside its window is evidence of that session's work, not
// of this run's.
type OtherDispatch struct {
	Session string
	Seq     int
	Role    string
	// Task is its task number (its manifest line's), nil for task-less work.
	Task *int
	// Start is its dispatch file's header time; End the end of its window, zero
	// while it is in flight (no completion line: open until now).
	Start, End time.Time
	// Context is what its dispatch file asks (the text after "## Context", else
	// its body), the evidence a commit's words are matched against. When its
	// own instructions are lost (cut before the heading, or rebuilt from the
	// manifest by a re-dispatch of a file that is gone) and it has a task, what
	// the session's other dispatch files of that task say follows it (crash
	// simulator seed 33783: a replay of task 3 rebuilt from the manifest, whose
	// commit shared a word with this run's fixer in flight and none with the
	// rebuilt context; its reviewer's context names task 3's work).
	Context string
}

// Window reports whether t lies in the dispatch's window (an open window runs
// to now).
func (o OtherDispatch) Window(t, now time.Time) bool {
	end := o.End
	if end.IsZero() {
		end = now
	}
	return !t.Before(o.Start) && !t.After(end)
}

// OtherSessions returns the dispatches of the other sessions the run's scratch
// directory names (manifest.Sessions), read once; nil when there are none or
// the run has no scratch directory. Their files are read, never written; one
// that cannot be read is left out.
func (pl *Pipeline) OtherSessions() []OtherDispatch {
	if pl.othersRead {
		return pl.others
	}
	pl.othersRead = true
	if pl.ScratchDir == "" {
		return nil
	}
	own := pl.Location.SessionID
	for _, s := range manifest.Sessions(pl.ScratchDir, pl.resolve) {
		if s.Session == own || filepath.Clean(s.Dir) == filepath.Clean(pl.DispatchDir) {
			continue
		}
		pl.others = append(pl.others, readOtherSession(s)...)
	}
	return pl.others
}

// readOtherSession reads the dispatches of one other session.
func readOtherSession(s manifest.SessionDir) []OtherDispatch {
	m, err := manifest.Read(filepath.Join(s.Dir, manifest.ManifestFile))
	if err != nil {
		return nil
	}
	files, _ := manifest.ReadDispatchDir(s.Dir)
	headers := map[int]manifest.DispatchFile{}
	for _, f := range files {
		if f.Kind == manifest.KindDispatch && f.Header != nil {
			headers[f.Seq] = f
		}
	}
	var out []OtherDispatch
	said := map[int]string{} // task -> what its dispatch files say, read once
	for _, e := range m.Entries {
		f, ok := headers[e.Seq]
		if !ok || f.Header.Timestamp.IsZero() {
			continue
		}
		text, has := contextIn(f.Path)
		if e.Task != nil && (!has || Rebuilt(text)) {
			n := *e.Task
			if _, done := said[n]; !done {
				var paths []string
				for _, x := range m.Entries {
					if x.Task != nil && *x.Task == n && headers[x.Seq].Path != "" && !slices.Contains(paths, headers[x.Seq].Path) {
						paths = append(paths, headers[x.Seq].Path)
					}
				}
				said[n] = sameTaskContexts(paths)
			}
			text += "\n" + said[n]
		}
		o := OtherDispatch{Session: s.Session, Seq: e.Seq, Role: e.Role, Task: e.Task, Start: f.Header.Timestamp, Context: text}
		if e.Status != manifest.StatusDispatched {
			if e.DurationS == nil {
				continue // ended, and when is unknown: no window to speak of
			}
			o.End = o.Start.Add(time.Duration(*e.DurationS * float64(time.Second)))
		}
		out = append(out, o)
	}
	return out
}

// contextOf reads the context part of a dispatch file (within its first
// describeLimit bytes, read through runfile: never blocking, regular files only);
// "" when unreadable. Describe and the other sessions' dispatches share it.
func contextOf(path string) string {
	text, _ := contextIn(path)
	return text
}

// HasContext reports whether d's dispatch file holds its "## Context"
// heading: its instructions are on disk, whole or cut. A file cut by a crash
// before the heading (or gone) holds only the role's preamble, which says
// nothing of which work it asked for.
func (pl *Pipeline) HasContext(d *Dispatch) bool {
	path, ok := pl.Files[d.Seq]
	if !ok {
		return false
	}
	_, has := contextIn(path)
	return has
}

// contextIn returns the context part of the dispatch file at path, and
// whether the file has a "## Context" heading.
func contextIn(path string) (string, bool) {
	data, err := runfile.ReadHead(path, runfile.Dispatch, describeLimit)
	if err != nil {
		return "", false
	}
	_, body, err := manifest.ParseDispatchHeader(data)
	if err != nil {
		body = data
	}
	text := string(body)
	i := strings.LastIndex(text, "## Context")
	if i >= 0 {
		text = text[i+len("## Context"):]
	}
	return text, i >= 0
}
