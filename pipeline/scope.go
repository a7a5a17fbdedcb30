package pipeline

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/replaytool/replay/checkpoint"
)

// zonelessSlack widens a run's start read from a marker time written without a
// zone: the instant is only known to within the world's UTC offsets.
const zonelessSlack = 14 * time.Hour

// maxNamedForeign bounds how many of another run's checkpoints a warning names.
const maxNamedForeign = 4

// RunStart returns the earliest instant the run can have started: the marker's
// start_time, else (or when earlier) the first dispatch header's time, less the
// checkpoint clock tolerance. A start_time without a zone counts from the earliest
// instant it can name. The zero time when nothing dates the run.
func (pl *Pipeline) RunStart() time.Time {
	var start time.Time
	if pl.Marker != nil {
		if t, zoned, ok := parseStart(pl.Marker.StartTime); ok {
			if !zoned {
				t = t.Add(-zonelessSlack)
			}
			start = t
		}
	}
	for _, d := range pl.Dispatches {
		start = earlier(start, d.Time)
	}
	if start.IsZero() {
		return start
	}
	return start.Add(-checkpoint.TimeSkewTolerance)
}

// parseStart reads a marker's start_time: RFC 3339 (zoned), or a wall clock
// without a zone (read as UTC, zoned false).
func parseStart(s string) (t time.Time, zoned, ok bool) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05Z07:00"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true, true
		}
	}
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02T15:04:05.999999999", "2006-01-02 15:04"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, false, true
		}
	}
	return time.Time{}, false, false
}

// scopeCheckpoints keeps as the run's candidate checkpoints those taken at or after
// its start (RunStart); the older ones belong to another run of the same project
// (its shadow repository keeps every run's checkpoints) and move to
// ForeignCheckpoints, named in a warning. Nothing is scoped when nothing dates the
// run.
func (pl *Pipeline) scopeCheckpoints() {
	start := pl.RunStart()
	if start.IsZero() || len(pl.Checkpoints) == 0 {
		return
	}
	own := pl.Checkpoints[:0:0]
	for _, cp := range pl.Checkpoints {
		if cp.Time.IsZero() || !cp.Time.Before(start) {
			own = append(own, cp)
		} else {
			pl.ForeignCheckpoints = append(pl.ForeignCheckpoints, cp)
		}
	}
	pl.Checkpoints = own
	if len(pl.ForeignCheckpoints) == 0 {
		return
	}
	named := append([]CheckpointRef{}, pl.ForeignCheckpoints...)
	sort.SliceStable(named, func(i, j int) bool { return named[i].Time.After(named[j].Time) })
	var list []string
	for _, cp := range named[:min(len(named), maxNamedForeign)] {
		list = append(list, DescribeForeign(cp))
	}
	more := ""
	if n := len(named) - maxNamedForeign; n > 0 {
		more = fmt.Sprintf(" and %d more", n)
	}
	pl.Warn("%d checkpoints of another run are not candidates for this run's resume point: taken before this run started (%s), newest first: %s%s",
		len(pl.ForeignCheckpoints), startLabel(pl), strings.Join(list, "; "), more)
}

// DescribeForeign names another run's checkpoint for a warning: reason, hash, when
// and the skill that took it.
func DescribeForeign(cp CheckpointRef) string {
	s := fmt.Sprintf("%s %s taken %s", cp.Reason, cp.Short, cp.Time.UTC().Format(time.RFC3339))
	if cp.Source != "" {
		s += " by " + cp.Source
	}
	return s
}

// startLabel says where the run's start came from.
func startLabel(pl *Pipeline) string {
	if pl.Marker != nil && strings.TrimSpace(pl.Marker.StartTime) != "" {
		return "marker start_time " + strings.TrimSpace(pl.Marker.StartTime)
	}
	return "first dispatch at " + pl.RunStart().Add(checkpoint.TimeSkewTolerance).UTC().Format(time.RFC3339)
}
