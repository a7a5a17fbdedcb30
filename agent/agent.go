package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/replaytool/replay/manifest"
	"github.com/replaytool/replay/templates"
)

// Status is the outcome of a dispatch: completed, failed or error.
type Status = manifest.Status

// Request is one dispatch to run.
type Request struct {
	Seq      int
	Role     string
	Phase    string
	Task     *int
	Template string
	// DispatchFile is the absolute path of <seq>-<template>.md, already written with
	// its audit header.
	DispatchFile string
	// DispatchDir is the directory the dispatch file lives in.
	DispatchDir string
	// Session is the replay session id.
	Session string
	// Replica names the replica of a replicated A/B run the request belongs to
	// (its arm and index, "mutated 2"), "" outside one. A seeded simulated agent
	// draws from it instead of Session: a rerun of an interrupted run can give a
	// replica another session name (the killed run's worktrees keep theirs), never
	// another identity.
	Replica string
	// WorkDir is the project working tree the agent works in (the command's cwd).
	WorkDir string
	// Body is the dispatch body without the audit header: what Key hashes.
	Body []byte
	// TemplateSHA256 is the hex sha256 of the template's content, "" when unknown;
	// it goes into the recording's fingerprint.
	TemplateSHA256 string
	// ModelTier is the model tier the dispatch asked for, "" when unknown.
	ModelTier string
	// Timeout bounds a command agent's run; 0 falls back to Options.Timeout (0: none).
	Timeout time.Duration
	// Now is the injected clock; nil means time.Now.
	Now func() time.Time
}

// ID returns the dispatch id "<seq>-<template>" of the request.
func (r Request) ID() string { return strconv.Itoa(r.Seq) + "-" + r.Template }

func (r Request) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// Response is what an agent returned for one dispatch.
type Response struct {
	Status Status
	// Summary is the text after the last "SUMMARY:" line of stdout, else its first
	// non-empty line, cut to MaxSummaryRunes; "(no output)" when stdout was empty.
	Summary string
	// Verdict is PASS, FAIL or BLOCKED when the output carried one (a line that is
	// exactly the word, or "VERDICT: <word>"); empty otherwise.
	Verdict string
	// Output is stdout, at most MaxOutputBytes of it.
	Output []byte
	// OutputChars counts the runes of the full stdout, also when Output was capped.
	OutputChars int
	// Truncated reports that Output holds only the first MaxOutputBytes of stdout.
	Truncated bool
	// DurationS is the elapsed time by the request's clock, in seconds rounded to 0.1
	// (0 under a fixed clock).
	DurationS float64
	// Reason says why a dispatch failed or errored, or notes an empty response.
	Reason string
	// Reused reports that the response came from a recording and no agent was called.
	Reused bool
	// Key is the recording key of the request.
	Key string
	// Agent names the agent that produced the response ("builtin:sim", or the command).
	Agent string
	// RecordedBy is, for a reused response, the dispatch id ("<seq>-<template>") whose
	// run recorded it.
	RecordedBy string
	// Fingerprint is what the response depended on: for a live response the
	// fingerprint it was recorded under, for a reused one the recorded fingerprint
	// (nil for a version 1 recording, which kept none).
	Fingerprint *Fingerprint
	// LiveReason says, for a live response, why no recording served the dispatch
	// (absent, stale and which fields, --reuse never...); it is not recorded.
	LiveReason string
	// Effects are the side effects the live run had (commits, dispatch-dir files),
	// kept with the recording and re-applied when it is reused.
	Effects *Effects
}

// Agent runs one dispatch. Run's error is for failures of replay itself (cannot
// start a process, cannot write a log); an agent that fails is a Response with
// Status failed or error.
type Agent interface {
	Name() string
	Run(ctx context.Context, req Request) (Response, error)
}

// The agent specs New knows besides shell commands.
const (
	SpecSim      = "builtin:sim"
	SpecRecorded = "recorded"
)

// Options configure the agents New builds.
type Options struct {
	// Store is where the recorded agent looks responses up.
	Store *Store
	// Timeout bounds a command agent's run when the request sets none; 0: none.
	Timeout time.Duration
	// Env is the environment a command agent inherits; nil means os.Environ().
	Env []string
	// Profile gives builtin:sim the role classes; nil means the embedded build profile.
	Profile *templates.Profile
}

// New returns the agent named by spec: "builtin:sim" (or its seeded stochastic
// mode "builtin:sim?flake=RATE&seed=N", see SimStochastic), "recorded", or a shell
// command run with sh -c.
func New(spec string, opts Options) (Agent, error) {
	spec = strings.TrimSpace(spec)
	switch {
	case spec == "":
		return nil, fmt.Errorf("--agent: empty agent; give a shell command, %s or %s", SpecSim, SpecRecorded)
	case spec == SpecSim || strings.HasPrefix(spec, SpecSim+"?"):
		st, err := ParseSimSpec(spec)
		if err != nil {
			return nil, err
		}
		p := opts.Profile
		if p == nil {
			var err error
			if p, err = templates.Load("build"); err != nil {
				return nil, fmt.Errorf("builtin:sim: %w", err)
			}
		}
		return &simAgent{profile: p, stochastic: st}, nil
	case spec == SpecRecorded:
		return &recordedAgent{store: opts.Store}, nil
	}
	if strings.HasPrefix(spec, "builtin:") {
		return nil, fmt.Errorf("--agent %s: unknown built-in agent; the only one is %s", spec, SpecSim)
	}
	return &commandAgent{cmd: spec, timeout: opts.Timeout, env: opts.Env}, nil
}

// Key returns the recording key of a dispatch: hex sha256 of the template name, a
// newline, and the dispatch body without its audit header.
func Key(template string, body []byte) string {
	h := sha256.New()
	h.Write([]byte(template))
	h.Write([]byte{'\n'})
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// elapsed returns the seconds between two clock readings rounded to 0.1, never negative.
func elapsed(start, end time.Time) float64 {
	d := end.Sub(start).Seconds()
	if d <= 0 {
		return 0
	}
	return math.Round(d*10) / 10
}

// safeName keeps a template name usable as part of a file name: anything but
// letters, digits, '.', '_' and '-' becomes '_', and a leading '.' too.
func safeName(s string) string {
	b := []byte(s)
	for i, c := range b {
		ok := c == '-' || c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !ok || (i == 0 && c == '.') {
			b[i] = '_'
		}
	}
	if len(b) == 0 {
		return "_"
	}
	return string(b)
}

func taskText(t *int, none string) string {
	if t == nil {
		return none
	}
	return strconv.Itoa(*t)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
