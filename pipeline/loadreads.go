package pipeline

import (
	"time"

	"github.com/replaytool/replay/manifest"
)

// loadReads are the reads Load starts at once: the manifest and the checkpoint
// listing in the background, the dispatch directory and the project's opening in
// the caller's goroutine meanwhile, and (WarmHistory) the history walk, which the
// dispatch directory's header times bound once they are read.
type loadReads struct {
	manifestDone chan struct{}
	m            *manifest.Manifest
	merr         error

	listingDone chan struct{}
	listing     checkpointListing

	files           []manifest.DispatchFile
	filesErr        error
	projectWarnings []string
	warm            *GitLog // nil unless WarmHistory and a project
}

// startReads locates the directories and starts the reads; nothing of what they
// say is in pl's warnings yet (Load adds it in order).
func (pl *Pipeline) startReads(o Options) *loadReads {
	r := &loadReads{manifestDone: make(chan struct{}), listingDone: make(chan struct{})}
	go func() {
		defer close(r.manifestDone)
		r.m, r.merr = manifest.Read(pl.Location.ManifestPath)
	}()
	pl.locateDirs(o)
	go func() {
		defer close(r.listingDone)
		r.listing = pl.readCheckpoints()
	}()
	r.projectWarnings = pl.openProject()
	// The walk reads the newest commits while the dispatch directory is read;
	// the header times then bound it.
	if o.WarmHistory && pl.Project != nil {
		r.warm = newUnboundedGitLog(pl.Project, pl.HistoryRef())
		r.warm.Start()
	}
	r.files, r.filesErr = manifest.ReadDispatchDir(pl.DispatchDir)
	if r.warm != nil {
		r.warm.bound(historyFloor(r.files))
	}
	return r
}

// historyFloor is the oldest time the history of the dispatches of files can
// need: windowStart of their header times. The pipeline's window (historyWindow)
// starts there or later, unless a live directory adds an older dispatch.
func historyFloor(files []manifest.DispatchFile) time.Time {
	earliest := time.Time{}
	for _, f := range files {
		if f.Kind == manifest.KindDispatch && f.Header != nil {
			earliest = earlier(earliest, f.Header.Timestamp)
		}
	}
	return windowStart(earliest)
}

// historySlack is how long before the earliest dispatch the history is read.
const historySlack = time.Hour

// windowStart is historySlack before earliest; zero when earliest is (no
// dispatch has a time: the whole history).
func windowStart(earliest time.Time) time.Time {
	if earliest.IsZero() {
		return earliest
	}
	return earliest.Add(-historySlack)
}

// earlier returns the earlier of a and t, a zero time counting as none.
func earlier(a, t time.Time) time.Time {
	if !t.IsZero() && (a.IsZero() || t.Before(a)) {
		return t
	}
	return a
}

// manifest waits for the manifest.
func (r *loadReads) manifest() (*manifest.Manifest, error) {
	<-r.manifestDone
	return r.m, r.merr
}

// checkpoints waits for the checkpoint listing.
func (r *loadReads) checkpoints() checkpointListing {
	<-r.listingDone
	return r.listing
}

// wait stops the history walk at its next commit and waits for every read still
// running (Load is failing: nothing of the history is needed).
func (r *loadReads) wait() {
	<-r.manifestDone
	<-r.listingDone
	if r.warm != nil {
		r.warm.stop()
		<-r.warm.done
	}
}
