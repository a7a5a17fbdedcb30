package manifest

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadReceipts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := writeFile(t, dir, ReceiptLedgerFile,
		`{"dispatch_id":"12-build-reviewer","phase":3,"rcpt_sha256":"ab12","verdict":"PASS"}`+"\n"+
			"junk\n\n"+
			`{"phase":"3"}`+"\n"+
			`{"dispatch_id":"16-build-reviewer","phase":"3","rcpt_sha256":"cd","verdict":"FAIL"}`)
	got, warns, err := ReadReceipts(path)
	require.NoError(t, err)
	assert.Equal(t, []Receipt{
		{DispatchID: "12-build-reviewer", Phase: "3", RcptSHA256: "ab12", Verdict: "PASS"},
		{DispatchID: "16-build-reviewer", Phase: "3", RcptSHA256: "cd", Verdict: "FAIL"},
	}, got)
	assert.Equal(t, []Warning{
		{Line: 2, Text: "corrupt receipt skipped: not a JSON object"},
		{Line: 4, Text: `corrupt receipt skipped: no "dispatch_id"`},
	}, warns)
	seq, ok := got[0].Seq()
	assert.True(t, ok)
	assert.Equal(t, 12, seq)

	got, warns, err = ReadReceipts(filepath.Join(dir, "missing.jsonl"))
	assert.NoError(t, err)
	assert.Empty(t, got)
	assert.Empty(t, warns)
}

func TestReadDispatchActive(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, ".dispatch-active-1775430161", "")
	writeFile(t, dir, ".dispatch-active-1775000000", "")
	writeFile(t, dir, ".dispatch-active-", "")
	writeFile(t, dir, ".pipeline-active", "x")
	sids, err := ReadDispatchActive(dir)
	require.NoError(t, err)
	assert.Equal(t, []string{"1775000000", "1775430161"}, sids)

	sids, err = ReadDispatchActive(filepath.Join(dir, "missing"))
	assert.NoError(t, err)
	assert.Empty(t, sids)
}
