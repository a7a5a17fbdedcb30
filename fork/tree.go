package fork

import (
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/replaytool/replay/pipeline"
)

// The kinds of run in a tree of runs.
const (
	KindOriginal = "original"
	KindResume   = "resume"
	KindAB       = "ab"
	KindFork     = "fork"
)

// Node is one run of a pipeline's tree of runs and the runs made from it.
type Node struct {
	Session string `json:"session"`
	Kind    string `json:"kind"`
	// Parent is the session the run was made from ("" for the original run).
	Parent string `json:"parent,omitempty"`
	// At is the fork point: the first seq the run does not share with its parent
	// (for a resume or an A/B session, the lowest seq it re-executed).
	At            int      `json:"at,omitempty"`
	Reason        string   `json:"reason,omitempty"`
	Created       string   `json:"created,omitempty"`
	Substitutions []int    `json:"substitutions,omitempty"`
	Dir           string   `json:"dir,omitempty"`
	Dispatches    int      `json:"dispatches"`
	Children      []*Node  `json:"children"`
	Notes         []string `json:"notes,omitempty"`
}

// Tree returns the tree of runs of the original run pl: its resumes and A/B
// sessions (from its manifest's replay entries) and its forks (from their lineage
// records, forks of forks under their parent). A fork whose parent is gone, or
// whose records form a cycle, hangs under the original run with a note and a
// warning (see placeForks). Unreadable records are warnings.
func Tree(pl *pipeline.Pipeline) (*Node, []string) {
	root := &Node{Session: pl.Location.SessionID, Kind: KindOriginal, Children: []*Node{}}
	replays := map[string]*Node{}
	var order []string
	for i := range pl.Manifest.Entries {
		e := &pl.Manifest.Entries[i]
		if e.ReplaySession == nil {
			root.Dispatches++
			continue
		}
		n, ok := replays[*e.ReplaySession]
		if !ok {
			kind := KindResume
			if pipeline.IsABEntry(e) {
				kind = KindAB
			}
			n = &Node{Session: *e.ReplaySession, Kind: kind, Parent: root.Session, Children: []*Node{}}
			replays[n.Session] = n
			order = append(order, n.Session)
		}
		n.Dispatches++
		if e.ReplayOf != nil && (n.At == 0 || *e.ReplayOf < n.At) {
			n.At = *e.ReplayOf
		}
	}
	for _, s := range order {
		root.Children = append(root.Children, replays[s])
	}
	recs, warns := ListRecords(pl.ScratchDir)
	nodes := map[string]*Node{root.Session: root}
	for _, r := range recs {
		if r.Root != root.Session {
			continue
		}
		n := &Node{Session: r.Session, Kind: KindFork, Parent: r.Parent, At: r.ForkSeq, Reason: r.Reason, Created: r.CreatedAt,
			Dir: forkDir(pl, r.Session), Children: []*Node{}}
		for _, s := range r.Substitutions {
			n.Substitutions = append(n.Substitutions, s.Seq)
		}
		if own, err := ownEntries(n.Dir); err == nil {
			n.Dispatches = len(own)
		} else {
			n.Notes = append(n.Notes, err.Error())
		}
		nodes[r.Session] = n
	}
	warns = append(warns, placeForks(root, nodes, recs)...)
	sortTree(root)
	return root, warns
}

// sessionBefore orders replay sessions by their ids read as numbers: replay names a
// session by the Unix second it started, with "-N" for the N-th one of that second
// and for the N-th replica of an A/B replay ("1775462401-2-10" after "1775462401-2-9").
// Replicas that run at once append to the manifest in the order they finish, so the
// order of first appearance would differ between two runs of the same replay. Ids
// that are not dash-separated numbers (a manifest is anyone's text) come after the
// others, in their order of first appearance.
func sessionBefore(a, b string) bool {
	na, oka := sessionNumbers(a)
	nb, okb := sessionNumbers(b)
	if oka != okb {
		return oka
	}
	return oka && slices.Compare(na, nb) < 0
}

// sessionNumbers is a session id's dash-separated numbers, false when a part is not one.
func sessionNumbers(id string) ([]int64, bool) {
	parts := strings.Split(id, "-")
	out := make([]int64, len(parts))
	for i, p := range parts {
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil || n < 0 {
			return nil, false
		}
		out[i] = n
	}
	return out, true
}

// sortTree orders every node's replays by session (sessionBefore), then its forks
// by fork seq, then session.
func sortTree(n *Node) {
	sort.SliceStable(n.Children, func(i, j int) bool {
		a, b := n.Children[i], n.Children[j]
		if (a.Kind == KindFork) != (b.Kind == KindFork) {
			return b.Kind == KindFork
		}
		if a.Kind != KindFork {
			return sessionBefore(a.Session, b.Session)
		}
		if a.At != b.At {
			return a.At < b.At
		}
		return a.Session < b.Session
	})
	for _, c := range n.Children {
		sortTree(c)
	}
}
