#!/usr/bin/env bash
# bench/plan.sh — `replay plan` on a synthetic crashed pipeline of BENCH_DISPATCHES
# dispatches (default 2,000) over a project history of BENCH_COMMITS commits (default
# 2,000), beside `git log --oneline | wc -l` on the same repository, in one run.
#
# Each command runs RUNS times (default 5) after one warm-up run; the figures are the
# minimum wall time (and, informational, the minimum CPU time, user + sys). Goal:
# plan <= 3x `git log --oneline | wc -l` (the plan reads the same history plus the
# dispatch files); the absolute time is printed as information. Set BENCH_BIG_COMMITS (e.g. 20000) to also
# plan over that longer history and print how the plan's time grows with it.
set -euo pipefail

DISPATCHES=${BENCH_DISPATCHES:-2000}
COMMITS=${BENCH_COMMITS:-2000}
BIG=${BENCH_BIG_COMMITS:-}
RUNS=${RUNS:-${BENCH_RUNS:-5}}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/replay-bench-plan.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

(cd "$ROOT" && go build -o "$WORK/replay" ./cmd/replay)
# The fixture builder is a test tool, not part of the replay binary.
(cd "$ROOT" && go build -o "$WORK/benchfixture" ./internal/testkit/benchfixture)
# git log reads only the repository: no system or user config.
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null

# measure CMD...: one warm-up run, then RUNS timed runs; prints "best median cpu" in
# seconds: the best and median wall time, and the best CPU time (user + sys, of
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
	cpu=$(printf '%s\n' "${cpus[@]}" | sort -n | head -1)
	echo "$best $med $cpu"
}
ratio() { awk -v o="$1" -v r="$2" 'BEGIN { if (r > 0) printf "%.2f", o / r; else print "inf" }'; }

declare -a ROWS
declare -A PLAN
bench() { # history
	local history=$1 dir="$WORK/h$1" name="plan-${DISPATCHES}x$1" info project home tmp scratch now commits
	info=$("$WORK/benchfixture" -dir "$dir" -dispatches "$DISPATCHES" -commits "$history")
	field() { sed -n "s/^$1=//p" <<<"$info"; }
	project=$(field project) home=$(field home) tmp=$(field tmp) scratch=$(field scratch) now=$(field now) commits=$(field commits)
	# Both sides run as a user types them: no subshell around either (the plan
	# runs in the project, as after cd).
	cd "$project"
	plan() { HOME="$home" TMPDIR="$tmp" "$WORK/replay" plan "$scratch" --now "$now" --quiet; }
	gitlog() { git -C "$project" log --oneline | wc -l; }
	# The plan must be the right one: resume at the last wave, nothing failed verification.
	local resume
	resume=$(plan | sed -n 's/^\*\*Resume point:\*\* //p')
	[ -n "$resume" ] || { echo "plan.sh: replay plan printed no resume point" >&2; exit 1; }
	[ "$(gitlog)" -eq "$commits" ] || { echo "plan.sh: git log counts $(gitlog) commits, want $commits" >&2; exit 1; }
	local ours ours_med ours_cpu ref ref_med ref_cpu
	read -r ours ours_med ours_cpu < <(measure plan)
	read -r ref ref_med ref_cpu < <(measure gitlog)
	PLAN[$history]=$ours_cpu
	if [ "$history" = "$COMMITS" ]; then
		printf 'ROW\t%s\t%s\t%s\t%s\n' "plan ${DISPATCHES} dispatches (absolute)" "$ours" "$ref" "-"
		printf 'ROW\t%s\t%s\t%s\t%s\n' "plan ${DISPATCHES} dispatches vs git log ($commits)" "$ours" "$ref" "ratio<=3"
		printf 'ROW\t%s\t%s\t%s\t%s\n' "plan ${DISPATCHES} dispatches, cpu" "$ours_cpu" "$ref_cpu" "-"
	fi
	ROWS+=("$name (wall)|$ours|$ref|$(ratio "$ours" "$ref")" "$name (cpu)|$ours_cpu|$ref_cpu|$(ratio "$ours_cpu" "$ref_cpu")")
	printf '%s: replay plan %ss (median %ss, cpu %ss) vs git log --oneline | wc -l over %s commits %ss (median %ss, cpu %ss): ratio %s wall, %s cpu (goal: ratio <= 3)\n  resume point: %s\n' \
		"$name" "$ours" "$ours_med" "$ours_cpu" "$commits" "$ref" "$ref_med" "$ref_cpu" \
		"$(ratio "$ours" "$ref")" "$(ratio "$ours_cpu" "$ref_cpu")" "$resume"
}

bench "$COMMITS"
if [ -n "$BIG" ]; then
	bench "$BIG"
	printf 'independence: plan cpu over %s commits / over %s commits = %s (1.00 = no growth with history)\n' \
		"$BIG" "$COMMITS" "$(ratio "${PLAN[$BIG]}" "${PLAN[$COMMITS]}")"
fi

printf '\n%-27s | %8s | %9s | %5s\n' benchmark ours reference ratio
printf '%-27s-|-%8s-|-%9s-|-%5s\n' "---------------------------" "--------" "---------" "-----"
for r in "${ROWS[@]}"; do
	IFS='|' read -r name o g rt <<<"$r"
	printf '%-27s | %7ss | %8ss | %5s\n' "$name" "$o" "$g" "$rt"
done
