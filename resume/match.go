package resume

import (
	"sort"
	"time"
)

// Edge weights of the attribution matching, in tiers, each worth more than the
// most every lower tier can add up to over a component of up to maxRows
// dispatches, so the matching maximises them in order:
//
//  1. the number of dispatches given a commit whose message does not name another
//     task (agreeingWeight, on top of edgeWeight);
//  2. the number of dispatches given a commit at all (edgeWeight): a commit naming
//     another task still counts, after the first tier, so a dispatch whose own
//     commit misnames a sibling's task verifies when the sibling's own commit is
//     elsewhere, yet such a commit never displaces one that agrees;
//  3. the preferences: a commit that names the dispatch's task, then the number of
//     words it shares with the task's description, then how close it lies to the
//     end of the dispatch's window (in seconds, up to maxTimeScore).
//
// Above maxRows rows per component, the order of the tiers is no longer strict,
// never the sums' range: 2^10 rows of at most 2^52 fit an int64.
const (
	maxRows              = 1 << 10
	agreeingWeight int64 = 1 << 51
	edgeWeight     int64 = 1 << 39
	taskWeight     int64 = 1 << 27
	wordWeight     int64 = 1 << 19
	maxWords             = 1 << 7
	timeWeight     int64 = 1
	maxTimeScore         = 1 << 18
)

// edge is one commit a dispatch may be given: row and col index the dispatches and
// commits of one matching problem.
type edge struct {
	row, col int
	weight   int64
}

// timeScore is the time preference of an edge: larger the nearer the commit lies to
// the end of the dispatch's window (in seconds), never negative.
func timeScore(commit, end time.Time) int64 {
	d := commit.Sub(end)
	if d < 0 {
		d = -d
	}
	s := int64(d / time.Second)
	if s >= maxTimeScore {
		return 0
	}
	return maxTimeScore - 1 - s
}

// maxWeightMatching returns, for each of rows rows, the column matched to it (-1
// for none): a matching of maximum total weight over the given edges (rows and
// columns not joined by an edge are never matched). The problem is split into its
// connected components, each solved by the Hungarian method (sizes are small: the
// mutating dispatches in flight together and their commits). Ties are broken
// deterministically by the order of the rows and columns.
func maxWeightMatching(rows, cols int, edges []edge) []int {
	match := make([]int, rows)
	for i := range match {
		match[i] = -1
	}
	// Union-find over rows (0..rows-1) and columns (rows..rows+cols-1).
	parent := make([]int, rows+cols)
	for i := range parent {
		parent[i] = i
	}
	find := func(x int) int {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	for _, e := range edges {
		a, b := find(e.row), find(rows+e.col)
		if a != b {
			parent[max(a, b)] = min(a, b)
		}
	}
	comp := map[int][]edge{}
	var roots []int
	for _, e := range edges {
		r := find(e.row)
		if _, ok := comp[r]; !ok {
			roots = append(roots, r)
		}
		comp[r] = append(comp[r], e)
	}
	sort.Ints(roots)
	for _, r := range roots {
		solveComponent(comp[r], match)
	}
	return match
}

// solveComponent solves one connected component by the Hungarian method on a
// square cost matrix (cost = -weight, 0 where there is no edge: such a pair in
// the assignment means unmatched), writing its pairs into match.
func solveComponent(es []edge, match []int) {
	var rowIDs, colIDs []int
	rowAt, colAt := map[int]int{}, map[int]int{}
	for _, e := range es {
		if _, ok := rowAt[e.row]; !ok {
			rowAt[e.row] = -1
			rowIDs = append(rowIDs, e.row)
		}
		if _, ok := colAt[e.col]; !ok {
			colAt[e.col] = -1
			colIDs = append(colIDs, e.col)
		}
	}
	sort.Ints(rowIDs)
	sort.Ints(colIDs)
	for i, r := range rowIDs {
		rowAt[r] = i
	}
	for j, c := range colIDs {
		colAt[c] = j
	}
	n := max(len(rowIDs), len(colIDs))
	w := make([][]int64, n)
	for i := range w {
		w[i] = make([]int64, n)
	}
	for _, e := range es {
		i, j := rowAt[e.row], colAt[e.col]
		w[i][j] = max(w[i][j], e.weight)
	}
	assign := hungarianMax(w)
	for i, j := range assign {
		if i < len(rowIDs) && j < len(colIDs) && w[i][j] > 0 {
			match[rowIDs[i]] = colIDs[j]
		}
	}
}

// hungarianMax returns a maximum-weight perfect assignment of the square matrix w
// (row i gets column result[i]), by the O(n³) Hungarian method with potentials.
func hungarianMax(w [][]int64) []int {
	n := len(w)
	const inf = int64(1) << 62
	u := make([]int64, n+1)
	v := make([]int64, n+1)
	p := make([]int, n+1) // p[j]: the row (1-based) matched to column j
	way := make([]int, n+1)
	for i := 1; i <= n; i++ {
		p[0] = i
		j0 := 0
		minv := make([]int64, n+1)
		used := make([]bool, n+1)
		for j := range minv {
			minv[j] = inf
		}
		for {
			used[j0] = true
			i0, delta, j1 := p[j0], inf, 0
			for j := 1; j <= n; j++ {
				if used[j] {
					continue
				}
				cur := -w[i0-1][j-1] - u[i0] - v[j]
				if cur < minv[j] {
					minv[j], way[j] = cur, j0
				}
				if minv[j] < delta {
					delta, j1 = minv[j], j
				}
			}
			for j := 0; j <= n; j++ {
				if used[j] {
					u[p[j]] += delta
					v[j] -= delta
				} else {
					minv[j] -= delta
				}
			}
			j0 = j1
			if p[j0] == 0 {
				break
			}
		}
		for j0 != 0 {
			j1 := way[j0]
			p[j0] = p[j1]
			j0 = j1
		}
	}
	result := make([]int, n)
	for j := 1; j <= n; j++ {
		if p[j] > 0 {
			result[p[j]-1] = j - 1
		}
	}
	return result
}
