package pipeline

import (
	"regexp"

	"github.com/replaytool/replay/internal/runfile"
	"github.com/replaytool/replay/manifest"
)

// Ask is what a dispatch file asks its agent to produce, read from its text: the
// evidence a role no profile names must leave.
type Ask int

const (
	// AskUnknown: the dispatch file is gone or unreadable.
	AskUnknown Ask = iota
	// AskNothing: the text asks for no file and no commit (the agent answers in
	// the conversation).
	AskNothing
	// AskFile: the text asks for an output file, a report file or a receipt.
	AskFile
	// AskCommit: the text asks for a commit or for code changes.
	AskCommit
)

var (
	asksCommit = regexp.MustCompile(`(?i)\b(git commit|commit (your|the|all|each|it|them|changes|work|with)|create a commit|make a commit|implement (the|this|task|a|each)|apply (the|each|your) fix(es)?|fix (the|each|every) (finding|issue|bug)s?)\b`)
	asksFile   = regexp.MustCompile(`(?i)(\b(write|save|record|append|store|put)\b[^.\n]{0,80}\b(to|into|in|as)\b[^.\n]{0,60}(\.md|\.json|\.jsonl|\.txt|\bfile\b)|-output\.md|receipt-ledger|\boutput file\b)`)
)

// Asks reads what d's dispatch file asks its agent to produce (a commit, a file,
// nothing); AskUnknown when the file is gone or unreadable.
func (pl *Pipeline) Asks(d *Dispatch) Ask {
	path, ok := pl.Files[d.Seq]
	if !ok {
		return AskUnknown
	}
	data, err := runfile.ReadHead(path, runfile.Dispatch, describeLimit)
	if err != nil {
		return AskUnknown
	}
	if _, body, err := manifest.ParseDispatchHeader(data); err == nil {
		data = body
	}
	return AsksOf(data)
}

// AsksOf classifies a dispatch body's request: a commit, else a file, else nothing.
func AsksOf(body []byte) Ask {
	switch {
	case asksCommit.Match(body):
		return AskCommit
	case asksFile.Match(body):
		return AskFile
	}
	return AskNothing
}
