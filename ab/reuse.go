package ab

import (
	"encoding/json"
	"fmt"

	"github.com/replaytool/replay/manifest"
	"github.com/replaytool/replay/report"
)

// LiveReasonKey is the manifest key of a replay's completion line that says why
// no recording served the dispatch (absent, stale: fields, --reuse never...).
const LiveReasonKey = "live_reason"

// reuseScore is the share of the replay's dispatches served from recordings, read
// from its entries: a completion line marked reused was served, any other says why
// not under live_reason. Entries still in flight are not counted. A replay none of
// whose lines carries either mark (made before replays recorded them) has no score.
func (c *Comparison) reuseScore() *report.ReuseScore {
	s := &report.ReuseScore{}
	marked := false
	for i := range c.Replay {
		_, reused := c.Replay[i].Extra["reused"]
		_, live := c.Replay[i].Extra[LiveReasonKey]
		marked = marked || reused || live
	}
	if !marked {
		return nil
	}
	for i := range c.Replay {
		e := &c.Replay[i]
		if e.Status == manifest.StatusDispatched {
			continue
		}
		it := report.ReuseItem{Seq: e.Seq, Role: e.Role, Template: templateOf(e.File)}
		var reused bool
		if raw, ok := e.Extra["reused"]; ok && json.Unmarshal(raw, &reused) == nil && reused {
			it.Served = true
			s.Served++
		} else {
			it.Reason = liveReason(e)
		}
		s.Items = append(s.Items, it)
	}
	s.Total = len(s.Items)
	if s.Total == 0 {
		return nil
	}
	return s
}

// liveReason is why entry e ran live, as its completion line recorded it.
func liveReason(e *manifest.Entry) string {
	var why string
	if raw, ok := e.Extra[LiveReasonKey]; ok && json.Unmarshal(raw, &why) == nil && why != "" {
		if e.Status != manifest.StatusCompleted {
			return fmt.Sprintf("%s (ended %s)", why, e.Status)
		}
		return why
	}
	if e.Status != manifest.StatusCompleted {
		return fmt.Sprintf("ended %s", e.Status)
	}
	return "ran live (no reason recorded)"
}

// templateOf is the template part of a dispatch file name "<seq>-<template>.md".
func templateOf(file string) string {
	name := file
	if n := len(name); n > 3 && name[n-3:] == ".md" {
		name = name[:n-3]
	}
	for i := 0; i < len(name); i++ {
		if name[i] == '-' {
			return name[i+1:]
		}
		if name[i] < '0' || name[i] > '9' {
			break
		}
	}
	return name
}
