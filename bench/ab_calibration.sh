#!/bin/sh
# ab_calibration.sh: the no-op experiment of issue 29 on the real binary.
#
# Builds replay, then for each seed builds the demo pipeline and replays it with a replacement template byte-identical to the original
# (build-reviewer-prompt.md=same.md), REPLICAS replicas per arm and
# builtin:sim?flake=FLAKE&seed=N, and counts the verdicts. With UNTIL=1 it adds
# --until-decided --max-replicas MAX. With WORSE=1 the replacement carries the
# directive "replay-sim: flake=0.7" (a truly worse template) instead.
#
#   SEEDS=40 REPLICAS=10 bench/ab_calibration.sh
#   SEEDS=40 REPLICAS=3 UNTIL=1 MAX=10 bench/ab_calibration.sh
#
# Everything happens under one temp dir, removed at the end.
set -eu
SEEDS=${SEEDS:-40}
REPLICAS=${REPLICAS:-10}
FLAKE=${FLAKE:-0.05}
UNTIL=${UNTIL:-0}
MAX=${MAX:-10}
WORSE=${WORSE:-0}
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
seed=1
while [ "$seed" -le "$SEEDS" ]; do
	# A fresh demo per seed: its run is found by its project's path, so a copy
	# elsewhere would not be.
	rm -rf "$work/run"
	"$work/replay" demo --dir "$work/run" >/dev/null 2>&1
	memory=$(find "$work/run/home/.claude/projects" -maxdepth 2 -type d -name memory | head -n 1)
	# shellcheck disable=SC2086
	verdict=$(cd "$work/run/project" && HOME="$work/run/home" TMPDIR="$work/run/tmp" \
		"$work/replay" "$memory" --mutate "build-reviewer-prompt.md=$work/same.md" \
		--templates "$work/run/templates" --replicas "$REPLICAS" --jobs "$JOBS" $extra \
		--agent "builtin:sim?flake=$FLAKE&seed=$seed" --now 2026-04-06T02:02:41Z --json 2>/dev/null |
		sed -n 's/^  "decision": {"verdict": *"\([a-z]*\)".*/\1/p; s/^    "verdict": "\([a-z]*\)",$/\1/p' | head -n 1) || true
	case "$verdict" in
	adopt) adopt=$((adopt + 1)) ;;
	reject) reject=$((reject + 1)) ;;
	skip) skip=$((skip + 1)) ;;
	expand) expand=$((expand + 1)) ;;
	*) errors=$((errors + 1)) ;;
	esac
	echo "seed $seed: ${verdict:-error}"
	seed=$((seed + 1))
done
echo "seeds=$SEEDS replicas=$REPLICAS until=$UNTIL max=$MAX worse=$WORSE flake=$FLAKE: adopt=$adopt reject=$reject skip=$skip expand=$expand errors=$errors"
echo "false-decision rate (adopt+reject)/seeds = $(awk "BEGIN{printf \"%.3f\", ($adopt+$reject)/$SEEDS}")"
