package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"github.com/go-git/go-git/v5"
	"github.com/replaytool/replay/internal/gitrepo"
	"github.com/replaytool/replay/internal/platform"
	"github.com/replaytool/replay/internal/runfile"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Fingerprint says what a recorded response depended on: a recording is a faithful
// stand-in for a live dispatch only while every field still matches.
type Fingerprint struct {
	// Template is the template name of the dispatch.
	Template string `json:"template"`
	// TemplateSHA256 is the hex sha256 of the template's content, "" when the caller
	// did not know the template file.
	TemplateSHA256 string `json:"template_sha256,omitempty"`
	// BodySHA256 is the hex sha256 of the dispatch body without its audit header.
	BodySHA256 string `json:"body_sha256"`
	// Role is the dispatch's role.
	Role string `json:"role"`
	// ModelTier is the model tier the dispatch asked for, "" when unknown.
	ModelTier string `json:"model_tier,omitempty"`
	// Agent is the agent's identity: its name (the command text), and, when the
	// command's program is a file, "#sha256:" and the hash of that file.
	Agent string `json:"agent"`
	// InputTree is the hex tree hash of HEAD in the worktree the agent started from,
	// "" when the dispatch had no git worktree.
	InputTree string `json:"input_tree,omitempty"`
}

// Fingerprint field names, as Diff reports them.
const (
	FieldTemplate     = "template"
	FieldTemplateHash = "template_sha256"
	FieldBody         = "body_sha256"
	FieldRole         = "role"
	FieldModelTier    = "model_tier"
	FieldAgent        = "agent"
	FieldInputTree    = "input_tree"
	// FieldWave is not a fingerprint field: it names a recording whose commits
	// are a wave effect (see Effects.Wave), stale whatever its fingerprint.
	FieldWave = "wave_effect"
)

// Diff returns the names of the fields in which f (the recorded fingerprint) and g
// differ, in a fixed order; with ignoreTree the input tree is not compared. An
// empty template hash on either side is not a difference (one side did not know
// it); neither is an empty agent or input tree in f: the recording stands for any
// agent or tree (a fork's substituted answer, a dispatch run outside a git
// worktree).
func (f Fingerprint) Diff(g Fingerprint, ignoreTree bool) []string {
	var out []string
	add := func(name string, differ bool) {
		if differ {
			out = append(out, name)
		}
	}
	add(FieldTemplate, f.Template != g.Template)
	add(FieldTemplateHash, f.TemplateSHA256 != "" && g.TemplateSHA256 != "" && f.TemplateSHA256 != g.TemplateSHA256)
	add(FieldBody, f.BodySHA256 != g.BodySHA256)
	add(FieldRole, f.Role != g.Role)
	add(FieldModelTier, f.ModelTier != g.ModelTier)
	add(FieldAgent, f.Agent != "" && f.Agent != g.Agent)
	add(FieldInputTree, !ignoreTree && f.InputTree != "" && f.InputTree != g.InputTree)
	return out
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// FingerprintFor returns the fingerprint of req run by agentName from the input
// tree tree, without reading anything but the agent's program; "" for agentName or
// tree leaves that field open (any agent, any tree).
func FingerprintFor(req Request, agentName, tree string) Fingerprint {
	return fingerprintAt(req, agentName, tree)
}

// fingerprintAt is the fingerprint of req run by agentName from the input tree tree.
func fingerprintAt(req Request, agentName, tree string) Fingerprint {
	return Fingerprint{
		Template: req.Template, TemplateSHA256: req.TemplateSHA256, BodySHA256: sha256Hex(req.Body),
		Role: req.Role, ModelTier: req.ModelTier, Agent: AgentIdentity(agentName, req.WorkDir), InputTree: tree,
	}
}

// AgentIdentity returns name, followed by "#sha256:<hex>" when name is a command
// whose first word is a regular file (relative to workDir, or found on PATH), so an
// edited agent script changes the identity.
func AgentIdentity(name, workDir string) string {
	fields := strings.Fields(name)
	if len(fields) == 0 || strings.HasPrefix(name, "builtin:") || name == SpecRecorded {
		return name
	}
	prog := fields[0]
	if !strings.ContainsRune(prog, '/') {
		p, err := exec.LookPath(prog)
		if err != nil {
			return name
		}
		prog = p
	} else if !filepath.IsAbs(prog) && workDir != "" {
		prog = filepath.Join(workDir, prog)
	}
	sum, ok := programHash(prog) // a FIFO, a device or over the limit: not fingerprinted
	if !ok {
		return name
	}
	return name + "#sha256:" + sum
}

// programKey is the identity of an agent program file as read: its path, device,
// inode, size, modification and change times. A program edited, replaced or
// touched has another key.
type programKey struct {
	path         string
	dev, ino     uint64
	size         int64
	mtime, ctime int64
}

// programHashes are the hex sha256 of the agent programs this process read, by
// their programKey: a re-dispatch fingerprints every live dispatch, and the agent
// (a binary of megabytes) is read and hashed once per process instead.
var programHashes sync.Map

// programSettled is how long before the read a program's modification and change
// times must be for its hash to be kept: file times are coarse (a few
// milliseconds), so a file written again at once, to the same size, can keep both;
// one written later than this after the read has a later change time, hence
// another key (git's rule for racily clean index entries).
const programSettled = time.Second

// programHash returns the hex sha256 of the agent program at prog, a regular file
// within runfile.AgentProgram's limit (false otherwise): from programHashes when
// the opened file has a key this process hashed, else read and hashed.
func programHash(prog string) (string, bool) {
	f, err := runfile.Open(prog, runfile.AgentProgram)
	if err != nil {
		return "", false
	}
	defer f.Close()
	info := f.Stat()
	st, stOK := platform.FileStat(info)
	// not the injected clock: the file system's own times are compared
	settled := time.Now().Add(-programSettled)
	stOK = stOK && info.ModTime().Before(settled) && st.Ctime.Before(settled)
	key := programKey{path: prog, dev: st.Dev, ino: st.Ino, size: info.Size(), mtime: info.ModTime().UnixNano(), ctime: st.Ctime.UnixNano()}
	if stOK {
		if sum, hit := programHashes.Load(key); hit {
			return sum.(string), true
		}
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", false
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if stOK {
		programHashes.Store(key, sum)
	}
	return sum, true
}

// readHead returns the HEAD commit of the worktree at dir and its tree, in one
// opening of the repository; both "" when there is none (see openHead).
func readHead(dir string) (head, tree string, err error) {
	return readHeadWith(gitrepo.Open, dir)
}

// readHeadWith is readHead opening the repository with open.
func readHeadWith(open func(string) (*git.Repository, error), dir string) (head, tree string, err error) {
	repo, h, err := openHeadWith(open, dir)
	if repo == nil || err != nil {
		return "", "", err
	}
	c, err := repo.CommitObject(h)
	if err != nil {
		return "", "", fmt.Errorf("%s: HEAD %s: %w", dir, h, err)
	}
	return h.String(), c.TreeHash.String(), nil
}

// OpenHead opens the repository of the worktree at dir and returns it with its
// HEAD commit; the repository is nil (and the error too) when dir is empty, not a
// git worktree, or has no commit yet.
func OpenHead(dir string) (*git.Repository, string, error) {
	repo, h, err := openHead(dir)
	if repo == nil || err != nil {
		return nil, "", err
	}
	return repo, h.String(), nil
}
