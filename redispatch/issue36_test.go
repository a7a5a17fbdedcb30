package redispatch

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/replaytool/replay/agent"
	"github.com/replaytool/replay/manifest"
)

// issue36Pending lists the symptoms of issue 36 this package still shows; see
// e2e's issue36Pending.
var issue36Pending = map[string]string{}

// emptyAgent answers "completed" and does nothing, counting its calls.
type emptyAgent struct{ calls atomic.Int64 }

func (a *emptyAgent) Name() string { return "empty" }

func (a *emptyAgent) Run(_ context.Context, req agent.Request) (agent.Response, error) {
	a.calls.Add(1)
	return agent.Response{Status: manifest.StatusCompleted, Summary: "done", Agent: a.Name()}, nil
}

// Symptom 4 at the re-dispatch: a resume whose agent answered "completed"
// without the commit its work needs leaves the item to redo; the next resume
// calls the agent again instead of serving that recording.
func TestIssue36ResumeRunsLiveWhatARecordingDoesNotProve(t *testing.T) {
	p := buildFixture(t)
	ag := &emptyAgent{}
	res, err := Resume(resumeRequest(p, ag))
	require.NoError(t, err)
	require.Len(t, res.Report.Outcomes, 1)
	require.EqualValues(t, 1, ag.calls.Load())

	res, err = Resume(resumeRequest(p, ag))
	require.NoError(t, err)
	var problems []string
	if res.Report == nil || len(res.Report.Outcomes) != 1 {
		problems = append(problems, "the second resume re-dispatches nothing, though seq 19's work is still not on disk")
	} else if res.Report.Outcomes[0].Response.Reused || ag.calls.Load() != 2 {
		problems = append(problems, "the second resume served the recorded empty answer instead of calling the agent")
	}
	if reason, pending := issue36Pending["resume-serves-empty-answer"]; pending {
		if len(problems) > 0 {
			t.Skipf("pending (%s):\n- %s", reason, strings.Join(problems, "\n- "))
		}
		t.Fatalf("symptom no longer shows: remove it from issue36Pending (%s)", reason)
	}
	require.Empty(t, problems)
}
