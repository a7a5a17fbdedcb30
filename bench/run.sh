#!/usr/bin/env bash
# bench/run.sh — runs every bench/*.sh (but itself) and prints one table: for each
# metric of the performance targets, our figure, the reference tool's figure (the git
# binary, jq) measured in the same invocation, the ratio ours/reference, the goal and
# PASS or FAIL. Every figure is the minimum of at least 5 runs (RUNS, default 5).
#
# Each script prints, besides its own report, lines
#   "ROW<TAB>name<TAB>ours_s<TAB>ref_s<TAB>goal"
# where goal is "ratio<=X" (ours/ref at most X) or "-" (informational row, no goal).
# Goals are ratios to a reference tool measured in the same run only: absolute times
# do not hold on a shared machine, so absolute figures are printed as information.
# A script that prints any other goal fails the run.
# Usage: bench/run.sh [NAME...]   (names without .sh; default: all)
# Sizes are overridable, see each script's header (BENCH_FILES, BENCH_CP_FILES,
# BENCH_LINES, BENCH_BIG_LINES, BENCH_DISPATCHES, BENCH_COMMITS, RUNS).
set -euo pipefail
cd "$(dirname "$0")"
export RUNS=${RUNS:-5}

scripts=()
if [ $# -gt 0 ]; then
  for n in "$@"; do scripts+=("$n.sh"); done
else
  for s in *.sh; do
    [ "$s" = run.sh ] && continue
    scripts+=("$s")
  done
fi

rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
status=0
load_before=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "-")
for s in "${scripts[@]}"; do
  echo "== $s" >&2
  if ! bash "./$s" | tee -a /dev/stderr | grep -P '^ROW\t' | sed "s/^ROW\t/${s%.sh}\t/" >>"$rows"; then
    echo "bench/run.sh: $s failed" >&2
    status=1
  fi
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "-")

echo
echo "min of $RUNS runs per figure; load average before: $load_before, after: $load_after; $(nproc 2>/dev/null || echo '?') cores"
printf '%-10s %-44s %10s %10s %7s %-11s %s\n' script metric "ours (s)" "ref (s)" ratio goal result
printf '%-10s %-44s %10s %10s %7s %-11s %s\n' ---------- -------------------------------------------- ---------- ---------- ------- ----------- ------
awk -F'\t' '
{
  ratio = ($4 > 0) ? $3 / $4 : -1
  rs = (ratio >= 0) ? sprintf("%.2f", ratio) : "-"
  goal = ($5 == "") ? "-" : $5
  res = "-"
  if (goal ~ /^ratio<=/) { g = substr(goal, 8) + 0; res = (ratio >= 0 && ratio <= g) ? "PASS" : "FAIL" }
  else if (goal != "-") { res = "BAD-GOAL"; bad++ }
  if (res == "FAIL") fails++
  printf "%-10s %-44s %10.4f %10.4f %7s %-11s %s\n", $1, $2, $3, $4, rs, goal, res
}
END { printf "\n%d goal(s) failed\n", fails + 0; if (bad) printf "%d row(s) with a goal that is not ratio<=X or -\n", bad; exit (fails + bad > 0) }' "$rows" || status=1
exit $status
