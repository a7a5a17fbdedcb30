package pipeline

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/manifest"
	"github.com/replaytool/replay/templates"
)

func TestChooseProfile(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 4, 7, 10, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	run := func(marker string, dispatches []*Dispatch, cps []CheckpointRef) *Pipeline {
		own := make([]*Dispatch, len(dispatches)) // subtests run in parallel and set Class
		for i, d := range dispatches {
			c := *d
			own[i] = &c
		}
		pl := &Pipeline{Dispatches: own, Checkpoints: cps}
		if marker != "-" {
			pl.Marker = &manifest.Marker{Skill: marker}
		}
		return pl
	}
	debugging := []*Dispatch{
		{Seq: 1, Role: "investigator", Phase: "1", Time: at(0), Pipeline: "debugging"},
		{Seq: 2, Role: "implementer", Phase: "4", Time: at(30), Pipeline: "debugging"},
	}
	forge := []*Dispatch{
		{Seq: 1, Role: "scout", Phase: "1", Time: at(0), Pipeline: "forge"},
		{Seq: 2, Role: "smith", Phase: "2", Time: at(20), Pipeline: "forge"},
		{Seq: 3, Role: "smith", Phase: "2", Time: at(40), Pipeline: "forge"},
	}
	forgeCps := []CheckpointRef{{Reason: "pre-forge-smelt", Time: at(10)}, {Reason: "pre-forge-round-2", Time: at(30)}, {Reason: "pre-restore-safety", Time: at(50)}}
	tests := []struct {
		name     string
		pl       *Pipeline
		explicit *templates.Profile
		profile  string
		generic  bool
		reason   string
		warn     string
	}{
		{name: "marker", pl: run("debugging", debugging, nil), profile: "debugging", reason: `chosen by the marker's skill "debugging"`},
		{name: "marker beats headers", pl: run("build", debugging, nil), profile: "build", reason: `chosen by the marker's skill "build"`, warn: `2 of 2 dispatch headers name "debugging"`},
		{name: "headers", pl: run("-", debugging, nil), profile: "debugging", reason: `chosen by the dispatch headers' Pipeline field (2 of 2 dispatch files) "debugging"`},
		{name: "sub-skill headers", pl: run("-", []*Dispatch{
			{Seq: 1, Role: "red-team", Phase: "1", Pipeline: "quality-gate"},
			{Seq: 2, Role: "red-team", Phase: "1", Pipeline: "quality-gate"},
			{Seq: 3, Role: "implementer", Phase: "4", Pipeline: "debugging"},
		}, nil), profile: "debugging", reason: `(1 of 3 dispatch files) "debugging"`},
		{name: "build evidence", pl: run("", []*Dispatch{{Seq: 1, Role: "build-implementer", Phase: "3"}}, nil), profile: "build", reason: "role build-implementer (seq 1)"},
		{name: "build by checkpoint", pl: run("", []*Dispatch{{Seq: 1, Role: "x", Phase: "3"}}, []CheckpointRef{{Reason: "pre-wave-2"}}), profile: "build", reason: "checkpoint pre-wave-2"},
		{name: "nothing", pl: run("-", []*Dispatch{{Seq: 1, Role: "x", Phase: "1"}}, nil), profile: "unknown", generic: true, reason: "does not look like build", warn: "nothing names the pipeline's skill"},
		{name: "unknown skill", pl: run("forge", forge, forgeCps), profile: "forge", generic: true, reason: `the marker's skill "forge" has no profile`, warn: `skill "forge" (named by the marker's skill) has no pipeline profile`},
		{name: "explicit", pl: run("build", debugging, nil), explicit: &templates.Profile{Skill: "mine", Phases: []templates.Phase{{ID: "1"}}}, profile: "mine", reason: "loaded from --profile f.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.pl.chooseProfile(tt.explicit, "f.json")
			require.NotNil(t, tt.pl.Profile)
			assert.Equal(t, tt.profile, tt.pl.Profile.Skill)
			assert.Equal(t, tt.generic, tt.pl.Profile.Generic)
			assert.Contains(t, tt.pl.ProfileReason, tt.reason)
			if tt.warn != "" {
				assert.Contains(t, joinLines(tt.pl.Warnings), tt.warn)
			}
			for _, d := range tt.pl.Dispatches {
				assert.Equal(t, tt.pl.Profile.ClassOf(d.Role), d.Class, "seq %d", d.Seq)
			}
		})
	}
}

func TestGenericProfileFromRun(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 4, 7, 10, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	pl := &Pipeline{
		Marker: &manifest.Marker{Skill: "forge"},
		Dispatches: []*Dispatch{
			{Seq: 1, Role: "scout", Phase: "1", Time: at(0)},
			{Seq: 2, Role: "smith", Phase: "2", Time: at(20)},
			{Seq: 3, Role: "smith", Phase: "2", Time: at(40)},
		},
		Checkpoints: []CheckpointRef{{Reason: "pre-forge-smelt", Time: at(10)}, {Reason: "pre-forge-round-2", Time: at(30)}},
	}
	pl.chooseProfile(nil, "")
	p := pl.Profile
	assert.Equal(t, []templates.BoundarySpec{
		{Name: "Pre-Phase 2", Phase: "2", Reasons: []string{"pre-forge-smelt"}},
		{Name: "Mid-Phase 2 (pre-forge-round-2)", Phase: "2", Reasons: []string{"pre-forge-round-2"}, Mid: true},
	}, p.Boundaries)
	assert.Equal(t, templates.RoleOutput, pl.Dispatches[0].Class, "scout is output-producing by its name")
	assert.Equal(t, templates.RoleUnknown, pl.Dispatches[1].Class)
	assert.Contains(t, joinLines(pl.Warnings), `generic profile: role "scout" taken as output`)
}

func joinLines(lines []string) string {
	out := ""
	for _, l := range lines {
		out += l + "\n"
	}
	return out
}

// A checkpoint taken between a timed dispatch and the next one, with a
// dispatch between them whose file is gone (no time): the times cannot say
// which phase it opens; its reason pre-<phase> names the untimed dispatch's
// phase, so it opens that one, not the next timed dispatch's (crash simulator
// seed 3227: pre-triage was placed at fix, the triage boundary had no
// checkpoint and the resume kept the disk state).
func TestPlaceMarkByReasonAmongUntimed(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 4, 26, 8, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	line := func(n int) *manifest.Entry { return &manifest.Entry{FirstLine: n} }
	ds := []*Dispatch{
		{Seq: 1, Role: "scanner", Phase: "scan", Time: at(1), Entry: line(1)},
		{Seq: 2, Role: "scanner", Phase: "scan", Time: at(2), Entry: line(2)},
		{Seq: 3, Role: "triager", Phase: "triage", Entry: line(5)}, // its file is gone
		{Seq: 4, Role: "fixer", Phase: "fix", Time: at(20), Entry: line(7)},
	}
	timed := []*Dispatch{ds[0], ds[1], ds[3]}
	for _, tc := range []struct {
		reason, phase string
		opens         bool
	}{
		{"pre-triage", "triage", true},
		{"pre-fix", "fix", true},       // names the next timed dispatch's phase
		{"pre-something", "fix", true}, // names no untimed phase: the next timed one's
		{"PRE-TRIAGE", "triage", true}, // case does not matter
	} {
		m, ok := placeMark(CheckpointRef{Reason: tc.reason, Time: at(10)}, timed, ds)
		require.True(t, ok)
		assert.Equal(t, tc.phase, m.Phase, tc.reason)
		assert.Equal(t, tc.opens, m.Opens, tc.reason)
	}
	// the untimed dispatch's line before the last timed dispatch before the
	// checkpoint: it ran before it, so the reason does not move the mark
	m, _ := placeMark(CheckpointRef{Reason: "pre-triage", Time: at(10)}, timed, []*Dispatch{ds[0], {Seq: 3, Role: "triager", Phase: "triage", Entry: line(1)}, ds[1], ds[3]})
	assert.Equal(t, "fix", m.Phase)
}

// The same after every timed dispatch: an audit's last fixer, its file gone,
// ran after the triager, and pre-fix was taken between them (crash simulator
// seeds 5098, 9551). Placed in the last timed dispatch's phase, pre-fix left
// the fix phase with no checkpoint; the resume restored a later checkpoint
// (pre-report, taken after the fixer committed) and re-executed the fixer on
// top of its own commit. Its reason names the untimed fixer's phase: it
// opens that phase.
func TestPlaceMarkAfterEveryTimedDispatchByReason(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 4, 26, 8, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	line := func(n int) *manifest.Entry { return &manifest.Entry{FirstLine: n} }
	ds := []*Dispatch{
		{Seq: 1, Role: "scanner", Phase: "scan", Time: at(1), Entry: line(1)},
		{Seq: 2, Role: "triager", Phase: "triage", Time: at(5), Entry: line(3)},
		{Seq: 3, Role: "fixer", Phase: "fix", Entry: line(5)}, // its file is gone
	}
	timed := []*Dispatch{ds[0], ds[1]}
	for _, tc := range []struct {
		reason, phase string
		opens         bool
	}{
		{"pre-fix", "fix", true},
		{"pre-report", "triage", false}, // names no recorded phase: the last timed one's
	} {
		m, ok := placeMark(CheckpointRef{Reason: tc.reason, Time: at(10)}, timed, ds)
		require.True(t, ok)
		assert.Equal(t, tc.phase, m.Phase, tc.reason)
		assert.Equal(t, tc.opens, m.Opens, tc.reason)
	}
}
