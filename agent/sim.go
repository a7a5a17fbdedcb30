package agent

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/replaytool/replay/internal/safewrite"
	"github.com/replaytool/replay/manifest"
	"github.com/replaytool/replay/templates"
)

// SimFailChecks is how many "must" lines a dispatch body needs for builtin:sim's
// reviewers and gates to answer FAIL.
const SimFailChecks = 3

// simAgent is builtin:sim: a deterministic stand-in for the pipeline's roles whose
// every effect derives from the dispatch body, the request and its clock.
type simAgent struct {
	profile *templates.Profile
	// stochastic is the seeded stochastic mode; nil for the deterministic one.
	stochastic *SimStochastic
}

func (a *simAgent) Name() string {
	if a.stochastic != nil {
		return a.stochastic.String()
	}
	return SpecSim
}

// SimChecks returns the lines of body that contain "must" (any case): builtin:sim's
// checks. Reviewers and gates answer FAIL when there are SimFailChecks or more.
func SimChecks(body []byte) []string {
	var out []string
	for line := range strings.SplitSeq(string(body), "\n") {
		if strings.Contains(strings.ToLower(line), "must") {
			out = append(out, strings.TrimSpace(line))
		}
	}
	return out
}

// Run plays req's role: mutating roles commit in req.WorkDir, output roles write a
// findings file and a receipt, gates and unknown roles print a verdict. What goes
// wrong is a failed response, never an error.
func (a *simAgent) Run(ctx context.Context, req Request) (Response, error) {
	resp := Response{Agent: a.Name(), Status: manifest.StatusCompleted}
	if err := ctx.Err(); err != nil {
		resp.Status, resp.Reason, resp.Summary = manifest.StatusError, "agent interrupted: "+err.Error(), "interrupted"
		return resp, nil
	}
	start := req.now()
	checks := SimChecks(req.Body)
	verdict := "PASS"
	if len(checks) >= SimFailChecks {
		verdict = "FAIL"
	}
	flaked, simDuration := false, 0.0
	st := a.stochastic
	effects, directed, derr := parseSimDirective(req.Body)
	if derr != nil {
		resp.Status, resp.Reason, resp.Summary = manifest.StatusError, "builtin:sim: "+derr.Error(), "bad sim directive"
		return resp, nil
	}
	if directed {
		own := SimStochastic{}
		if st != nil {
			own = *st
		}
		if effects.hasFlake {
			own.Flake = effects.flake
		}
		st = &own
	}
	if st != nil {
		flaked, simDuration = st.apply(req, effects)
		simDuration = math.Round(simDuration*effects.scale*10) / 10
	}
	if flaked {
		verdict = "FAIL"
	}
	label := req.Role
	if req.Task != nil {
		label = "Task " + strconv.Itoa(*req.Task)
	}
	var out bytes.Buffer
	var err error
	switch class := a.profile.ClassOf(req.Role); {
	case flaked && class == templates.RoleMutating:
		err = fmt.Errorf("simulated flake (%s)", a.Name())
		if effects.hasFlake {
			err = fmt.Errorf("simulated flake (%s flake=%g)", SimDirective, st.Flake)
		}
	case class == templates.RoleMutating:
		// Not "on <branch>": a replica's branch carries its session name, whose
		// length would make its output characters differ from another's.
		var sha string
		if sha, err = simCommit(req); err == nil {
			prefix := label + ": "
			if req.Task == nil {
				prefix = ""
			}
			fmt.Fprintf(&out, "Committed %s.\nSUMMARY: %s%s committed %s\n", sha, prefix, req.Role, sha[:7])
		}
	case class == templates.RoleOutput:
		// The response names the findings file by what it is, never by its path:
		// the path holds the seq, which concurrent replicas of a replicated A/B
		// run take in whatever order they reach the shared manifest, and the
		// install directory. The response stays the same for the same request.
		if _, err = simFindings(req, checks, verdict); err == nil {
			fmt.Fprintf(&out, "Wrote the findings of %s (%s) beside the dispatch file.\nVERDICT: %s\nSUMMARY: %s %s: %d findings\n", label, req.Template, verdict, label, verdict, len(checks))
		}
	default:
		fmt.Fprintf(&out, "%s\nSUMMARY: %s %s: %d checks\n", verdict, label, verdict, len(checks))
	}
	if err != nil {
		out.Reset()
		fmt.Fprintf(&out, "SUMMARY: %s failed\n", req.Role)
		resp.Status, resp.Reason = manifest.StatusFailed, "builtin:sim: "+err.Error()
	}
	c := newCapture(MaxOutputBytes)
	_, _ = c.Write(out.Bytes())
	c.fill(&resp)
	resp.DurationS = elapsed(start, req.now())
	if st != nil {
		resp.DurationS = simDuration
	}
	return resp, nil
}

// simFindings writes <seq>-<template>-findings.md beside the dispatch file and
// appends its receipt to the receipt ledger; it returns the findings file's path.
func simFindings(req Request, checks []string, verdict string) (string, error) {
	id := strconv.Itoa(req.Seq) + "-" + safeName(req.Template)
	var b strings.Builder
	sum := sha256.Sum256(req.Body)
	fmt.Fprintf(&b, "# Findings: %s\n\n", id)
	fmt.Fprintf(&b, "**Role:** %s | **Phase:** %s | **Task:** %s\n", req.Role, orDash(req.Phase), taskText(req.Task, "-"))
	fmt.Fprintf(&b, "**Verdict:** %s\n**Checks:** %d (lines of the dispatch that say \"must\")\n", verdict, len(checks))
	fmt.Fprintf(&b, "**Body-SHA256:** %s\n\n## Findings\n\n", hex.EncodeToString(sum[:]))
	if len(checks) == 0 {
		b.WriteString("No findings.\n")
	}
	for i, c := range checks {
		fmt.Fprintf(&b, "%d. Check: %s\n", i+1, clipSummary(c))
	}
	path := filepath.Join(req.DispatchDir, id+"-findings.md")
	if err := safewrite.WriteAtomic(path, []byte(b.String())); err != nil {
		return "", err
	}
	fsum := sha256.Sum256([]byte(b.String()))
	line, err := json.Marshal(manifest.Receipt{DispatchID: id, Phase: req.Phase, RcptSHA256: hex.EncodeToString(fsum[:]), Verdict: verdict})
	if err != nil {
		return "", err
	}
	return path, safewrite.AppendLine(filepath.Join(req.DispatchDir, manifest.ReceiptLedgerFile), line)
}
