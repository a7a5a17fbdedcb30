#!/bin/sh
# ab_calibration.sh: issue 29's experiments on the real binary.
#
# Builds replay, then for each seed builds the demo pipeline and replays it with a
# replacement template byte-identical to the original
# (build-reviewer-prompt.md=same.md), REPLICAS replicas per arm and
# builtin:sim?flake=FLAKE&seed=N, and counts the verdicts and the replicas that
# passed in each arm. With UNTIL=1 it adds --until-decided --max-replicas MAX.
#
# With WORSE=1 the replacement carries the directive "replay-sim: flake=0.7": a
# truly worse template. Its two reviewer dispatches fail 70% of the time against
# the spec's FLAKE (default 0.02 with WORSE=1, as in the issue) for the replay's
# seven other dispatches. A replica passes only when every one of its nine
# dispatches succeeded (a failed mutating dispatch stops it, a failed reviewer or
# tester answers FAIL, and the acceptance verdict fails on any FAIL), so the arms
# pass about 0.98^9 = 83% against 0.3^2 * 0.98^7 = 8% of their replicas; the
# pooled pass counts printed at the end show what they did.
#
#   SEEDS=40 REPLICAS=10 bench/ab_calibration.sh
#   SEEDS=40 REPLICAS=3 UNTIL=1 MAX=10 bench/ab_calibration.sh
#   SEEDS=40 REPLICAS=10 WORSE=1 bench/ab_calibration.sh
#
# Everything happens under one temp dir, removed at the end.
set -eu
SEEDS=${SEEDS:-40}
FIRST=${FIRST:-1}
REPLICAS=${REPLICAS:-10}
WORSE=${WORSE:-0}
if [ "$WORSE" = 1 ]; then
	FLAKE=${FLAKE:-0.02}
else
	FLAKE=${FLAKE:-0.05}
fi
UNTIL=${UNTIL:-0}
MAX=${MAX:-10}
JOBS=${JOBS:-2}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$root" && go build -o "$work/replay" ./cmd/replay)
"$work/replay" demo --dir "$work/demo" >/dev/null 2>&1
cp "$work/demo/templates/build-reviewer-prompt.md" "$work/same.md"
if [ "$WORSE" = 1 ]; then
	printf '\n<!-- replay-sim: flake=0.7 -->\n' >>"$work/same.md"
fi
extra=""
if [ "$UNTIL" = 1 ]; then
	extra="--until-decided --max-replicas $MAX"
fi
adopt=0 reject=0 skip=0 expand=0 errors=0
bpass=0 bn=0 mpass=0 mn=0
seed=$FIRST
last=$((FIRST + SEEDS - 1))
while [ "$seed" -le "$last" ]; do
	# A fresh demo per seed: its run is found by its project's path, so a copy
	# elsewhere would not be.
	rm -rf "$work/run"
	"$work/replay" demo --dir "$work/run" >/dev/null 2>&1
	memory=$(find "$work/run/home/.claude/projects" -maxdepth 2 -type d -name memory | head -n 1)
	# shellcheck disable=SC2086
	(cd "$work/run/project" && HOME="$work/run/home" TMPDIR="$work/run/tmp" \
		"$work/replay" "$memory" --mutate "build-reviewer-prompt.md=$work/same.md" \
		--templates "$work/run/templates" --replicas "$REPLICAS" --jobs "$JOBS" $extra \
		--agent "builtin:sim?flake=$FLAKE&seed=$seed" --now 2026-04-06T02:02:41Z --json >"$work/result.json" 2>/dev/null) || true
	verdict=$(sed -n 's/^    "verdict": "\([a-z]*\)",$/\1/p' "$work/result.json" | head -n 1)
	# The decision's pass counts: baseline_pass, then mutated_pass.
	counts=$(awk '/^    "(baseline|mutated)_pass": \{/ {arm=1; next}
		arm && /^      "passed": / {gsub(/[^0-9]/, ""); p=$0; next}
		arm && /^      "n": / {gsub(/[^0-9]/, ""); printf "%s %s ", p, $0; arm=0}' "$work/result.json")
	case "$verdict" in
	adopt) adopt=$((adopt + 1)) ;;
	reject) reject=$((reject + 1)) ;;
	skip) skip=$((skip + 1)) ;;
	expand) expand=$((expand + 1)) ;;
	*) errors=$((errors + 1)) ;;
	esac
	if [ -n "$counts" ]; then
		# shellcheck disable=SC2086
		set -- $counts
		bpass=$((bpass + $1)) bn=$((bn + $2)) mpass=$((mpass + $3)) mn=$((mn + $4))
		echo "seed $seed: $verdict (baseline $1/$2, mutated $3/$4)"
	else
		echo "seed $seed: ${verdict:-error}"
	fi
	seed=$((seed + 1))
done
echo "seeds=$FIRST..$last replicas=$REPLICAS until=$UNTIL max=$MAX worse=$WORSE flake=$FLAKE: adopt=$adopt reject=$reject skip=$skip expand=$expand errors=$errors"
echo "replicas passed: baseline $bpass/$bn, mutated $mpass/$mn"
echo "adopt+reject rate = $(awk "BEGIN{printf \"%.3f\", ($adopt+$reject)/$SEEDS}"), reject rate = $(awk "BEGIN{printf \"%.3f\", $reject/$SEEDS}")"
