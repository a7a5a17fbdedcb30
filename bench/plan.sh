#!/usr/bin/env bash
# bench/plan.sh — `replay plan` on a synthetic crashed pipeline of BENCH_DISPATCHES
# dispatches (default 2,000) over a project history of BENCH_COMMITS old commits
# (default 20,000), beside `git log --oneline | wc -l` on the same repository; then
# the same pipeline over 2,000 old commits, to show that the plan's time does not
# grow with the history before the pipeline's window.
#
# Each command runs BENCH_RUNS times (default 7) after one warm-up run. Rows: the
# median wall time ("plan-DxH") and the median CPU time, user + sys ("plan-DxH-cpu"),
# which a loaded machine disturbs less. Target: plan <= 3x git log on the
# 20,000-commit history, and about the same plan time on both histories.
set -euo pipefail

DISPATCHES=${BENCH_DISPATCHES:-2000}
COMMITS=${BENCH_COMMITS:-20000}
SMALL=${BENCH_SMALL_COMMITS:-2000}
RUNS=${BENCH_RUNS:-7}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/replay-bench-plan.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

(cd "$ROOT" && go build -o "$WORK/replay" ./cmd/replay)
# git log reads only the repository: no system or user config.
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null

# measure CMD...: one warm-up run, then RUNS timed runs; prints "median best cpu" in
# seconds: the median and best wall time, and the median CPU time (user + sys, of
# every process of CMD), which the machine's load disturbs less than wall time.
measure() {
	local i w u s
	local -a walls=() cpus=()
	local TIMEFORMAT='%R %U %S'
	"$@" >/dev/null
	for ((i = 0; i < RUNS; i++)); do
		read -r w u s < <({ time "$@" >/dev/null 2>&1; } 2>&1)
		walls+=("$w")
		cpus+=("$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.3f", u + s }')")
	done
	local med best cpu
	med=$(printf '%s\n' "${walls[@]}" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
	best=$(printf '%s\n' "${walls[@]}" | sort -n | head -1)
	cpu=$(printf '%s\n' "${cpus[@]}" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
	echo "$med $best $cpu"
}
ratio() { awk -v o="$1" -v r="$2" 'BEGIN { if (r > 0) printf "%.2f", o / r; else print "inf" }'; }

declare -a ROWS
declare -A PLAN
bench() { # history
	local history=$1 dir="$WORK/h$1" name="plan-${DISPATCHES}x$1" info project home tmp scratch now commits
	info=$("$WORK/replay" bench-fixture --dir "$dir" --dispatches "$DISPATCHES" --commits "$history")
	field() { sed -n "s/^$1=//p" <<<"$info"; }
	project=$(field project) home=$(field home) tmp=$(field tmp) scratch=$(field scratch) now=$(field now) commits=$(field commits)
	plan() { (cd "$project" && HOME="$home" TMPDIR="$tmp" "$WORK/replay" plan "$scratch" --now "$now" --quiet); }
	gitlog() { git -C "$project" log --oneline | wc -l; }
	# The plan must be the right one: resume at the last wave, nothing failed verification.
	local resume
	resume=$(plan | sed -n 's/^\*\*Resume point:\*\* //p')
	[ -n "$resume" ] || { echo "plan.sh: replay plan printed no resume point" >&2; exit 1; }
	[ "$(gitlog)" -eq "$commits" ] || { echo "plan.sh: git log counts $(gitlog) commits, want $commits" >&2; exit 1; }
	local ours ours_best ours_cpu ref ref_best ref_cpu
	read -r ours ours_best ours_cpu < <(measure plan)
	read -r ref ref_best ref_cpu < <(measure gitlog)
	PLAN[$history]=$ours_cpu
	printf 'ROW\t%s\t%s\t%s\n' "$name" "$ours" "$ref"
	printf 'ROW\t%s\t%s\t%s\n' "$name-cpu" "$ours_cpu" "$ref_cpu"
	ROWS+=("$name (wall)|$ours|$ref|$(ratio "$ours" "$ref")" "$name (cpu)|$ours_cpu|$ref_cpu|$(ratio "$ours_cpu" "$ref_cpu")")
	printf '%s: replay plan %ss (best %ss, cpu %ss) vs git log --oneline | wc -l over %s commits %ss (best %ss, cpu %ss): ratio %s wall, %s cpu (target <= 3)\n  resume point: %s\n' \
		"$name" "$ours" "$ours_best" "$ours_cpu" "$commits" "$ref" "$ref_best" "$ref_cpu" \
		"$(ratio "$ours" "$ref")" "$(ratio "$ours_cpu" "$ref_cpu")" "$resume"
}

bench "$COMMITS"
bench "$SMALL"
printf 'independence: plan cpu over %s commits / over %s commits = %s (1.00 = no growth with history)\n' \
	"$COMMITS" "$SMALL" "$(ratio "${PLAN[$COMMITS]}" "${PLAN[$SMALL]}")"

printf '\n%-27s | %8s | %9s | %5s\n' benchmark ours reference ratio
printf '%-27s-|-%8s-|-%9s-|-%5s\n' "---------------------------" "--------" "---------" "-----"
for r in "${ROWS[@]}"; do
	IFS='|' read -r name o g rt <<<"$r"
	printf '%-27s | %7ss | %8ss | %5s\n' "$name" "$o" "$g" "$rt"
done
