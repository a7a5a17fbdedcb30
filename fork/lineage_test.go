package fork

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const goodRecord = `{"version":1,"session":"1775441000","parent_session":"1775430161","root_session":"1775430161",
"root_manifest":"/x/manifest.jsonl","fork_seq":15,"reason":"r","created_at":"2026-04-06T03:00:00Z",
"substitutions":[{"seq":15,"file":"v.txt","sha256":"` + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef" + `"}],"worktree":"worktree"}`

func TestParseRecord(t *testing.T) {
	t.Parallel()
	r, err := ParseRecord([]byte(goodRecord), "lineage.json")
	require.NoError(t, err)
	assert.Equal(t, 15, r.ForkSeq)
	assert.Equal(t, "1775430161", r.Parent)

	bad := map[string]string{
		"version":    `{"version":2}`,
		"session":    `{"version":1,"session":"../x","parent_session":"1","root_session":"1","fork_seq":1}`,
		"fork seq":   `{"version":1,"session":"2","parent_session":"1","root_session":"1","fork_seq":0}`,
		"worktree":   `{"version":1,"session":"2","parent_session":"1","root_session":"1","fork_seq":3,"worktree":"../../etc"}`,
		"sub seq":    `{"version":1,"session":"2","parent_session":"1","root_session":"1","fork_seq":3,"substitutions":[{"seq":2,"sha256":"00"}]}`,
		"not json":   `{`,
		"wrong type": `{"version":"1"}`,
	}
	for name, text := range bad {
		_, err := ParseRecord([]byte(text), "lineage.json")
		assert.Error(t, err, name)
		if err != nil {
			assert.Contains(t, err.Error(), "lineage.json", name)
		}
	}
}

func TestSummarize(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, summary, verdict string }{
		{"VERDICT: FAIL\nSUMMARY: rejected: no tests\n", "Verdict FAIL. rejected: no tests", "FAIL"},
		{"SUMMARY: FAIL, no tests\nFAIL\n", "FAIL, no tests", "FAIL"},
		{"Looks fine\nPASS\n", "Verdict PASS. Looks fine", "PASS"},
		{"just text", "just text", ""},
		{"", "", ""},
	}
	for _, c := range cases {
		s, v := summarize([]byte(c.in))
		assert.Equal(t, c.summary, s, c.in)
		assert.Equal(t, c.verdict, v, c.in)
	}
}

func FuzzParseRecord(f *testing.F) {
	f.Add([]byte(goodRecord))
	f.Add([]byte(`{"version":1}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseRecord(data, "lineage.json")
		if err == nil && (r.Version != RecordVersion || r.ForkSeq < 1 || !sessionRE().MatchString(r.Session)) {
			t.Fatalf("accepted a bad record: %+v", r)
		}
	})
}
