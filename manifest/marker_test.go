package manifest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseMarker(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		in     string
		want   Marker
		errSub string
	}{
		{
			name: "8 keys",
			in:   `{"pipeline_id":"1775430161","skill":"build","phase":3,"start_time":"2026-04-07T09:02:41Z","scratch_dir":"/h/memory","dispatch_dir":"/tmp/crucible-dispatch-1775430161","branch":"feat/login","baseline_sha":"abc123"}`,
			want: Marker{PipelineID: "1775430161", Skill: "build", Phase: "3", StartTime: "2026-04-07T09:02:41Z", ScratchDir: "/h/memory", DispatchDir: "/tmp/crucible-dispatch-1775430161", Branch: "feat/login", BaselineSHA: "abc123", Shape: MarkerJSON8},
		},
		{
			name: "6 keys",
			in:   `{"pipeline_id":1775430161,"skill":"build","phase":"2","start_time":"t","scratch_dir":"/s","dispatch_dir":"/d"}`,
			want: Marker{PipelineID: "1775430161", Skill: "build", Phase: "2", StartTime: "t", ScratchDir: "/s", DispatchDir: "/d", Shape: MarkerJSON6},
		},
		{
			name: "4 lines",
			in:   "pipeline: build\nsession-id: 1775430161\nstarted: 2026-04-07T09:02:41Z\ndispatch-dir: /tmp/crucible-dispatch-1775430161/\n",
			want: Marker{PipelineID: "1775430161", Skill: "build", StartTime: "2026-04-07T09:02:41Z", DispatchDir: "/tmp/crucible-dispatch-1775430161/", Shape: MarkerText4},
		},
		{name: "empty", in: "  \n", errSub: "empty"},
		{name: "bad json", in: `{"pipeline_id":`, errSub: "not valid JSON"},
		{name: "object field", in: `{"pipeline_id":{"a":1}}`, errSub: `field "pipeline_id"`},
		{name: "text without colon", in: "hello world", errSub: "line 1"},
		{name: "names nothing", in: `{"skill":"build"}`, errSub: "cannot name a pipeline"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseMarker([]byte(tt.in))
			if tt.errSub != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.errSub)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, *got)
		})
	}
}
