package redispatch

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/replaytool/replay/agent"
	"github.com/replaytool/replay/resume"
	"github.com/replaytool/replay/templates"
)

// ResumeServe is a resume's rule for recordings (agent.Runner.Serve): a resume
// re-executes its work live; a recording stands in only when what it recorded
// proves it reproduces the work: its effects hold the artifact the role's class
// needs (a commit for a mutating role, an output file or receipt for an
// output-producing one, any effect for a role of unknown class; a
// conversation-only role needs none), and the attempt that recorded it did not
// fail verification in this decision (its answer was empty of the work). It
// returns "" when the recording may serve, else why the dispatch runs live.
func ResumeServe(a *resume.Analysis) func(agent.Request, *agent.Response) string {
	failed := map[int]bool{}
	for _, f := range a.Failures {
		failed[f.Seq] = true
	}
	for _, d := range a.Crash.Unverified {
		failed[d.Seq] = true
	}
	return func(req agent.Request, rec *agent.Response) string {
		if seq, ok := recordedSeq(rec.RecordedBy); ok && failed[seq] {
			return fmt.Sprintf("recorded by seq %d, whose work failed verification: a resume runs it live", seq)
		}
		return proves(a.Profile.ClassOf(req.Role), rec.Effects)
	}
}

// proves says why effects do not reproduce the work of a role of class; "" when
// they do.
func proves(class templates.RoleClass, e *agent.Effects) string {
	commits := e != nil && e.HeadAfter != "" && e.HeadAfter != e.HeadBefore
	outputs := e != nil && (len(e.Files) > 0 || len(e.Receipts) > 0)
	switch class {
	case templates.RoleNonArtifact:
		return ""
	case templates.RoleMutating:
		if !commits {
			return "its recording holds no commit, so it cannot reproduce the work: a resume runs it live"
		}
	case templates.RoleOutput:
		if !outputs {
			return "its recording holds no output file or receipt, so it cannot reproduce the work: a resume runs it live"
		}
	default:
		if !commits && !outputs {
			return "its recording holds no commit, output file or receipt, so it cannot reproduce the work: a resume runs it live"
		}
	}
	return ""
}

// recordedSeq reads the seq of a recording's RecordedBy ("<seq>-<template>").
func recordedSeq(id string) (int, bool) {
	head, _, ok := strings.Cut(id, "-")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(head)
	return n, err == nil
}
