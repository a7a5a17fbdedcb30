package agent

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/replaytool/replay/internal/gitrepo"
	"github.com/replaytool/replay/internal/runfile"
	"github.com/replaytool/replay/manifest"
)

// EffectsRefPrefix is the ref namespace that keeps the commits a recorded dispatch
// created: refs/replay/effects/<key> points to the dispatch's last commit.
const EffectsRefPrefix = "refs/replay/effects/"

// maxEffectFile bounds one dispatch-dir file kept with a recording.
const maxEffectFile = 8 << 20

// Effects are the side effects of one live dispatch: the commits it created in its
// worktree (HEAD before and after) and the files it wrote into the dispatch dir
// whose names start with its dispatch id ("<seq>-<template>-", e.g. its findings).
type Effects struct {
	HeadBefore string       `json:"head_before,omitempty"`
	HeadAfter  string       `json:"head_after,omitempty"`
	Files      []EffectFile `json:"files,omitempty"`
	// Receipts are the lines the dispatch appended to the dispatch dir's receipt
	// ledger (those whose dispatch_id is its own).
	Receipts []string `json:"receipts,omitempty"`
	// Objects are the git objects the commits brought (the commits, and the trees
	// and blobs their parents did not have), so the commits can be re-applied in
	// any worktree, also where the ref is missing.
	Objects []EffectObject `json:"objects,omitempty"`
	// Wave marks commits recorded while other live dispatches committed in the same
	// worktree (a parallel wave run with --jobs above 1): which of them are this
	// dispatch's cannot be told, so the recording is never re-applied alone (it is
	// stale under a live agent, and the recorded agent fails closed).
	Wave bool `json:"wave,omitempty"`
}

// EffectFile is one file a dispatch wrote into its dispatch dir.
type EffectFile struct {
	Name    string `json:"name"`
	Content string `json:"content,omitempty"`
	Base64  string `json:"content_base64,omitempty"`
}

// bytes returns the file's content.
func (f EffectFile) bytes() ([]byte, error) {
	if f.Base64 != "" {
		return base64.StdEncoding.DecodeString(f.Base64)
	}
	return []byte(f.Content), nil
}

// openHead opens the repository of the worktree at dir and reads its HEAD commit;
// the repository is nil (and the error too) when dir is empty, not a git worktree,
// or has no commit yet.
func openHead(dir string) (*git.Repository, plumbing.Hash, error) {
	return openHeadWith(gitrepo.Open, dir)
}

// openHeadWith is openHead opening the repository with open.
func openHeadWith(open func(string) (*git.Repository, error), dir string) (*git.Repository, plumbing.Hash, error) {
	if dir == "" {
		return nil, plumbing.ZeroHash, nil
	}
	repo, err := open(dir)
	if errors.Is(err, git.ErrRepositoryNotExists) {
		return nil, plumbing.ZeroHash, nil
	}
	if err != nil {
		return nil, plumbing.ZeroHash, fmt.Errorf("%s: cannot open the worktree's repository: %w", dir, err)
	}
	head, err := repo.Head()
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return nil, plumbing.ZeroHash, nil
	}
	if err != nil {
		return nil, plumbing.ZeroHash, fmt.Errorf("%s: cannot read HEAD: %w", dir, err)
	}
	return repo, head.Hash(), nil
}

// ownFiles returns the regular files of req's dispatch dir whose names start with
// its dispatch id and a dash, with their contents.
func ownFiles(req Request) (map[string][]byte, error) {
	out := map[string][]byte{}
	if req.DispatchDir == "" {
		return out, nil
	}
	entries, err := os.ReadDir(req.DispatchDir)
	if errors.Is(err, os.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", req.DispatchDir, err)
	}
	prefix := req.ID() + "-"
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		data, err := runfile.ReadFile(filepath.Join(req.DispatchDir, e.Name()), runfile.Kind{What: "dispatch output", Max: maxEffectFile})
		if err != nil {
			return nil, fmt.Errorf("dispatch %s: %w", req.ID(), err)
		}
		out[e.Name()] = data
	}
	lines, err := ledgerLines(req)
	if err != nil {
		return nil, err
	}
	for _, line := range lines {
		out[ledgerKey+line] = nil
	}
	return out, nil
}

// ledgerKey prefixes the receipt ledger's lines in an ownFiles snapshot (a name no
// file can have).
const ledgerKey = "\x00ledger\x00"

// ledgerLines returns the lines of req's receipt ledger (none when there is none).
func ledgerLines(req Request) ([]string, error) {
	if req.DispatchDir == "" {
		return nil, nil
	}
	data, err := runfile.ReadFile(filepath.Join(req.DispatchDir, manifest.ReceiptLedgerFile), runfile.ReceiptLedger)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("dispatch %s: %w", req.ID(), err)
	}
	var out []string
	for line := range strings.SplitSeq(string(data), "\n") {
		if line != "" {
			out = append(out, line)
		}
	}
	return out, nil
}

// ownReceipt reports whether a ledger line is a receipt of req's dispatch.
func ownReceipt(req Request, line string) bool {
	var r manifest.Receipt
	return json.Unmarshal([]byte(line), &r) == nil && r.DispatchID == req.ID()
}

// captureEffects compares the worktree and dispatch dir after a live run with the
// state before it, keeps new commits under refs/replay/effects/<key> and returns
// the effects (nil when there were none).
func captureEffects(req Request, key, headBefore string, before map[string][]byte) (*Effects, error) {
	// one opening of the repository for HEAD and the commits kept
	repo, head, err := openHead(req.WorkDir)
	if err != nil {
		return nil, err
	}
	headAfter := ""
	if repo != nil {
		headAfter = head.String()
	}
	after, err := ownFiles(req)
	if err != nil {
		return nil, err
	}
	eff := &Effects{}
	if headAfter != headBefore && headAfter != "" {
		objs, err := keepEffects(repo, req.WorkDir, key, headBefore, headAfter)
		if err != nil {
			return nil, err
		}
		eff.Objects = objs
		eff.HeadBefore, eff.HeadAfter = headBefore, headAfter
	}
	for _, name := range sortedKeys(after) {
		data := after[name]
		if strings.HasPrefix(name, ledgerKey) {
			continue
		}
		if old, ok := before[name]; ok && bytes.Equal(old, data) {
			continue
		}
		f := EffectFile{Name: name}
		if utf8.Valid(data) {
			f.Content = string(data)
		} else {
			f.Base64 = base64.StdEncoding.EncodeToString(data)
		}
		eff.Files = append(eff.Files, f)
	}
	receipts, err := ledgerLines(req)
	if err != nil {
		return nil, err
	}
	for _, line := range receipts {
		if _, had := before[ledgerKey+line]; !had && ownReceipt(req, line) {
			eff.Receipts = append(eff.Receipts, line)
		}
	}
	if eff.HeadAfter == "" && len(eff.Files) == 0 && len(eff.Receipts) == 0 {
		return nil, nil
	}
	return eff, nil
}

// checkEffectFiles checks the recorded files and receipts of a dispatch and re-keys
// them to req: a recording is reused by content, so it may come from a dispatch of
// another seq with the same template ("25-build-reviewer-findings.md" recorded,
// "37-build-reviewer-findings.md" restored). A name or receipt of another template,
// or a name with a path in it, is refused (a recording never chooses where replay
// writes). It returns the files (re-keyed names, decoded contents) and receipts.
func checkEffectFiles(req Request, eff *Effects) ([]EffectFile, [][]byte, []string, error) {
	names := make([]EffectFile, 0, len(eff.Files))
	out := make([][]byte, 0, len(eff.Files))
	for i, f := range eff.Files {
		name, ok := rekeyName(req, f.Name)
		if !ok {
			return nil, nil, nil, fmt.Errorf("field effects.files[%d].name: %q is not a file of dispatch %s", i, f.Name, req.ID())
		}
		data, err := f.bytes()
		if err != nil {
			return nil, nil, nil, fmt.Errorf("field effects.files[%d].content_base64: %w", i, err)
		}
		names = append(names, EffectFile{Name: name})
		out = append(out, data)
	}
	receipts := make([]string, 0, len(eff.Receipts))
	for i, line := range eff.Receipts {
		rekeyed, ok := rekeyReceipt(req, line)
		if !ok || strings.ContainsAny(line, "\n\r") {
			return nil, nil, nil, fmt.Errorf("field effects.receipts[%d]: not a receipt of dispatch %s", i, req.ID())
		}
		receipts = append(receipts, rekeyed)
	}
	return names, out, receipts, nil
}

// recordedID splits a recorded dispatch id "<seq>-<template>" and reports whether
// its template is req's.
func recordedID(req Request, id string) bool {
	seq, template, ok := strings.Cut(id, "-")
	if !ok || seq == "" || strings.Trim(seq, "0123456789") != "" {
		return false
	}
	return template == req.Template
}

// rekeyName maps a recorded file name "<seq>-<template>-<rest>" to req's id.
func rekeyName(req Request, name string) (string, bool) {
	if strings.ContainsAny(name, "/\\\x00") || filepath.Base(name) != name {
		return "", false
	}
	seq, rest, ok := strings.Cut(name, "-")
	if !ok {
		return "", false
	}
	tail, ok := strings.CutPrefix(rest, req.Template+"-")
	if !ok || tail == "" || !recordedID(req, seq+"-"+req.Template) {
		return "", false
	}
	return req.ID() + "-" + tail, true
}

// rekeyReceipt maps a recorded receipt line of a dispatch with req's template to
// req's id, changing only the value of its dispatch_id.
func rekeyReceipt(req Request, line string) (string, bool) {
	var r manifest.Receipt
	if json.Unmarshal([]byte(line), &r) != nil || !recordedID(req, r.DispatchID) {
		return "", false
	}
	if r.DispatchID == req.ID() {
		return line, true
	}
	old, _ := json.Marshal(r.DispatchID)
	now, _ := json.Marshal(req.ID())
	re := regexp.MustCompile(`("dispatch_id"\s*:\s*)` + regexp.QuoteMeta(string(old)))
	loc := re.FindStringSubmatchIndex(line)
	if loc == nil {
		return "", false
	}
	return line[:loc[0]] + line[loc[2]:loc[3]] + string(now) + line[loc[1]:], true
}
