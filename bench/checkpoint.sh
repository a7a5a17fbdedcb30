#!/usr/bin/env bash
# bench/checkpoint.sh — replay's checkpoint create/restore against the git binary,
# both measured in this one run, each figure the minimum of RUNS runs (default 5).
#
# Two projects, each with an ignored node_modules/ of BENCH_IGNORED files (default 5,000):
#  - BENCH_FILES files (default 20,000): restore across 1,000 changed files
#    (replay checkpoint restore --yes, which also takes the safety checkpoint, moves
#    the branch, writes the index and verifies, vs git checkout -f <sha> -- . &&
#    git clean -fdq on a separate git dir). Goal: ratio <= 1.0.
#  - BENCH_CP_FILES files (default 100,000): checkpoint after 100 changed files
#    (replay checkpoint create vs git add -A && git commit on a separate git dir).
#    Goal: ratio <= 0.6.
# The first checkpoint of each project is printed too, without a goal (one run).
set -euo pipefail

FILES=${BENCH_FILES:-20000}
CP_FILES=${BENCH_CP_FILES:-100000}
RUNS=${RUNS:-5}
IGNORED=${BENCH_IGNORED:-5000}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/replay-bench-checkpoint.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

(cd "$ROOT" && go build -o "$WORK/replay" ./cmd/replay)

# A small generator: `gen init DIR FILES IGNORED` makes the project, `gen mutate DIR
# FILES COUNT SEED` changes COUNT files (80% edited, 10% added, 10% deleted), the
# same way every time for the same arguments.
mkdir -p "$WORK/gen"
cat >"$WORK/gen/main.go" <<'GO'
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

func file(dir string, i int) string {
	return filepath.Join(dir, "src", fmt.Sprintf("pkg%03d", i/100), fmt.Sprintf("file%05d.go", i))
}

func content(i, seed int) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "package p // file %d version %d\n", i, seed)
	for l := 0; l < 20+i%60; l++ {
		fmt.Fprintf(&b, "var v%d_%d = %q\n", i, l, strings.Repeat("x", (i*7+l*13+seed)%40))
	}
	return []byte(b.String())
}

func write(p string, data []byte) {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		panic(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		panic(err)
	}
}

func main() {
	dir := os.Args[2]
	n, _ := strconv.Atoi(os.Args[3])
	switch os.Args[1] {
	case "init":
		ignored, _ := strconv.Atoi(os.Args[4])
		write(filepath.Join(dir, ".gitignore"), []byte("node_modules/\n*.log\n"))
		for i := 0; i < n; i++ {
			write(file(dir, i), content(i, 0))
		}
		for i := 0; i < ignored; i++ {
			write(filepath.Join(dir, "node_modules", fmt.Sprintf("m%03d", i/50), fmt.Sprintf("index%d.js", i)), []byte(fmt.Sprintf("module.exports = %d\n", i)))
		}
	case "mutate":
		count, _ := strconv.Atoi(os.Args[4])
		seed, _ := strconv.Atoi(os.Args[5])
		step := n / count
		for k := 0; k < count; k++ {
			i := (k*step + seed) % n
			switch {
			case k%10 == 8:
				os.Remove(file(dir, i))
			case k%10 == 9:
				write(filepath.Join(dir, "new", fmt.Sprintf("s%d", seed), fmt.Sprintf("n%05d.go", k)), content(k, seed))
			default:
				write(file(dir, i), content(i, seed))
			}
		}
	}
}
GO
(cd "$WORK/gen" && cat >go.mod <<'MOD'
module gen

go 1.21
MOD
go build -o "$WORK/genbin" .)
gen() { "$WORK/genbin" "$@"; }

# From here on nothing reads the real home or git config.
# gc.auto=0: an automatic gc that git starts in the background after a commit to
# the 100,000-file project would still be writing when the script removes it.
export HOME="$WORK/home" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=gc.auto GIT_CONFIG_VALUE_0=0 GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com \
	GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
mkdir -p "$HOME"

now() { date +%s%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.4f", (b - a) / 1e9 }'; }
# timed CMD...: seconds CMD took, its output discarded.
timed() { local t0 t1; t0=$(now); "$@" >/dev/null; t1=$(now); elapsed "$t0" "$t1"; }
# timedcpu CMD...: "WALL CPU" seconds of CMD, CPU being user + system time of CMD
# and its children; its output discarded, its stderr shown when it fails.
timedcpu() {
	local TIMEFORMAT='%3R %3U %3S' out
	out=$({ time "$@" >/dev/null 2>"$WORK/cmd.err"; } 2>&1) || { cat "$WORK/cmd.err" >&2; return 1; }
	awk '{ printf "%.4f %.4f\n", $1, $2 + $3 }' <<<"$out"
}
min() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b + 0 < a + 0) print b; else print a }'; }

declare -a ROWS
row() { # name ours_s ref_s goal
	local ratio
	ratio=$(awk -v o="$2" -v r="$3" 'BEGIN { if (r > 0) printf "%.2f", o / r; else print "inf" }')
	ROWS+=("$1|$2|$3|$ratio|$4")
	printf 'ROW\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4"
}

# setup DIR COUNT SHADOW_OURS SHADOW_REF: a project of COUNT files committed to its
# own git, plus a first checkpoint by both tools (one row, no goal).
setup() {
	local dir=$1 count=$2 ours=$3 ref=$4 o g
	mkdir -p "$dir"
	gen init "$dir" "$count" "$IGNORED"
	git -C "$dir" init -q -b main
	git -C "$dir" add -A
	git -C "$dir" commit -q -m "project baseline"
	git --git-dir="$ref" init -q
	o=$(timed "$WORK/replay" checkpoint create --reason bench-first --source bench --repo "$dir" --shadow "$ours" --quiet)
	g=$(timed sh -c 'git --git-dir="$1" --work-tree="$2" add -A && git --git-dir="$1" --work-tree="$2" commit -q -m bench-first' sh "$ref" "$dir")
	row "first checkpoint ($count files)" "$o" "$g" "-"
}

# 1. Checkpoint after 100 changed files of a CP_FILES-file tree.
Q="$WORK/big"
setup "$Q" "$CP_FILES" "$WORK/big-replay" "$WORK/big-git"
best_o="" best_g="" cpu_o="" cpu_g=""
for ((i = 0; i < RUNS; i++)); do
	gen mutate "$Q" "$CP_FILES" 100 $((100 + i))
	read -r o c < <(timedcpu "$WORK/replay" checkpoint create --reason "bench-$i" --source bench --repo "$Q" --shadow "$WORK/big-replay" --quiet)
	cpu_o=$(min "$cpu_o" "$c")
	read -r g c < <(timedcpu sh -c 'git --git-dir="$1" --work-tree="$2" add -A && git --git-dir="$1" --work-tree="$2" commit -q -m bench' sh "$WORK/big-git" "$Q")
	cpu_g=$(min "$cpu_g" "$c")
	best_o=$(min "$best_o" "$o") best_g=$(min "$best_g" "$g")
done
row "checkpoint after 100 changes ($CP_FILES files)" "$best_o" "$best_g" "ratio<=0.6"
row "checkpoint after 100 changes, cpu" "$cpu_o" "$cpu_g" "-"
rm -rf "$Q" "$WORK/big-replay" "$WORK/big-git"

# 2. Restore across 1,000 changed files of a FILES-file tree (the same changes for
# both tools, and both start from the same tree every run).
P="$WORK/project"
OURS="$WORK/shadow-replay"
REF="$WORK/shadow-git"
setup "$P" "$FILES" "$OURS" "$REF"
replay() { "$WORK/replay" "$@" --repo "$P" --shadow "$OURS" --quiet; }
gitref() { git --git-dir="$REF" --work-tree="$P" "$@"; }
ours_sha=$("$WORK/replay" checkpoint list --json --repo "$P" --shadow "$OURS" | awk -F'"' '/"hash"/ { h = $4 } END { print h }')
ref_sha=$(gitref rev-parse HEAD)
best_o="" best_g="" cpu_o="" cpu_g=""
for ((i = 0; i < RUNS; i++)); do
	gen mutate "$P" "$FILES" 1000 $((2 + i))
	read -r o c < <(timedcpu replay checkpoint restore "$ours_sha" --yes)
	cpu_o=$(min "$cpu_o" "$c")
	gen mutate "$P" "$FILES" 1000 $((2 + i))
	read -r g c < <(timedcpu sh -c 'git --git-dir="$1" --work-tree="$2" checkout -q -f "$3" -- . && git --git-dir="$1" --work-tree="$2" clean -fdq' sh "$REF" "$P" "$ref_sha")
	cpu_g=$(min "$cpu_g" "$c")
	best_o=$(min "$best_o" "$o") best_g=$(min "$best_g" "$g")
done
row "restore across 1000 changes ($FILES files)" "$best_o" "$best_g" "ratio<=1.0"
row "restore across 1000 changes, cpu" "$cpu_o" "$cpu_g" "-"

# Both tools must have produced the same tree.
ours_tree=$(git --git-dir="$OURS" rev-parse "$ours_sha^{tree}")
gitref add -A
ref_tree=$(gitref write-tree)
if [ "$ours_tree" != "$ref_tree" ]; then
	echo "checkpoint.sh: replay's tree $ours_tree differs from git's $ref_tree" >&2
	exit 1
fi

printf '\n%-46s | %8s | %9s | %5s | %s\n' benchmark ours reference ratio goal
for r in "${ROWS[@]}"; do
	IFS='|' read -r name o g ratio goal <<<"$r"
	printf '%-46s | %7ss | %8ss | %5s | %s\n' "$name" "$o" "$g" "$ratio" "$goal"
done
