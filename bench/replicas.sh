#!/usr/bin/env bash
# bench/replicas.sh — a replicated A/B replay of the demo's crashed pipeline (9
# dispatches re-run per replica) with REPLICAS replicas per arm (default 50, so 100
# replicas in all), JOBS at once (default 2), builtin:sim in its stochastic mode.
# builtin:sim does no work of its own, so the wall time is replay's overhead:
# loading, worktrees, dispatch files, manifest lines, comparisons, statistics.
# Figures (information, no goal: there is no reference tool to hold a ratio against,
# and absolute times do not hold on a shared machine; on an idle 2-core machine they
# were under 30 s for 100 replicas and at most 50 ms per dispatch).
# Prints, for bench/run.sh, ROW lines for both figures (ref 0, goal -).
set -euo pipefail

REPLICAS=${REPLICAS:-50}
JOBS=${JOBS:-2}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/replay-bench-replicas.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

(cd "$ROOT" && go build -o "$WORK/replay" ./cmd/replay)
"$WORK/replay" demo --dir "$WORK/demo" >/dev/null 2>&1
export HOME=$WORK/demo/home TMPDIR=$WORK/demo/tmp REPLAY_SYSTEM_TMP=$WORK/demo/systmp
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
scratch=$(ls -d "$HOME"/.claude/projects/*/memory)
cd "$WORK/demo/project"
TIMEFORMAT='%R'
wall=$( { time "$WORK/replay" "$scratch" --mutate "build-reviewer-prompt.md=$WORK/demo/stricter-build-reviewer.md" \
	--templates "$WORK/demo/templates" --replicas "$REPLICAS" --jobs "$JOBS" \
	--agent 'builtin:sim?flake=0.05&seed=7' --now 2026-04-06T02:02:41Z --quiet >"$WORK/report.md"; } 2>&1 )
last=$(tail -n1 "$scratch"/crucible-dispatch-*/replay-ab-replicas.jsonl) # the demo wrote one line before
rows=$(grep -o '"arm":' <<<"$last" | wc -l)
# A replica's dispatches carry a status; the summary's per-dispatch rows do not.
dispatches=$(grep -o '"dispatches":\[[^]]*\]' <<<"$last" | grep -o '"status":' | wc -l)
[ "$dispatches" -gt 0 ] || { echo "replicas.sh: no re-dispatched dispatch in the replicas' record" >&2; exit 1; }
awk -v w="$wall" -v r="$rows" -v d="$dispatches" 'BEGIN {
	printf "replicas: %d (%s)\nre-dispatched dispatches: %d\nwall: %.2f s (goal < 30 s for 100)\nper dispatch: %.1f ms (goal <= 50)\n", r, "'"$JOBS"' at once", d, w, 1000*w/d
}'
grep -m1 '^## Decision' "$WORK/report.md"
awk -v w="$wall" -v d="$dispatches" -v r="$rows" 'BEGIN {
	printf "ROW\t%d replicas, wall\t%.3f\t0\t-\n", r, w
	printf "ROW\tper re-dispatched dispatch (%d)\t%.4f\t0\t-\n", d, w/d
}'
