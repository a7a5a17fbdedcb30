#!/bin/sh
# ab_calibration.sh: the A/B rule's false-decision rate measured on the real binary.
#
# For each cell and seed it builds fresh demo pipelines and runs the replay the
# cell names with builtin:sim?flake=FLAKE&seed=N, then counts the verdicts. A
# false decision is an ADOPT or REJECT of a no-op, an ADOPT of a survivor or
# worse template, a REJECT of a faster one. Cells (CELLS, space-separated):
#
#   noop      byte-identical template, --replicas 10
#   more      the same, a user who starts with --replicas 5 and runs --more 5
#             again and again until decided or 40 replicas per arm
#   corpus    byte-identical template over 3 independent demo pipelines,
#             replay corpus --replicas 10
#   survivor  the template gives up on its slowest work (replay-sim: giveup=0.15
#             on the two reviewer dispatches: pass ~0.95 -> ~0.72, no real speed
#             change), --replicas 5 --until-decided --max-replicas 40
#   worse     replay-sim: flake=0.7 (pass ~0.83 -> ~0.08), same design
#   faster    replay-sim: duration=0.5, same design
#
#   SEEDS=200 bench/ab_calibration.sh
#   SEEDS=20 CELLS="noop more" DOC=docs/ab-statistics.md bench/ab_calibration.sh
#
# With DOC=FILE the table is written between the binary-calibration markers of
# FILE (generated: do not edit by hand). Everything else happens under one temp
# dir, removed at the end.
set -eu
SEEDS=${SEEDS:-200}
FIRST=${FIRST:-1}
CELLS=${CELLS:-noop more corpus survivor worse faster}
JOBS=${JOBS:-2}
DOC=${DOC:-}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$root" && go build -o "$work/replay" ./cmd/replay)
now=2026-04-06T02:02:41Z

# demo DIR: a fresh demo pipeline; prints its memory dir.
demo() {
	rm -rf "$1"
	"$work/replay" demo --dir "$1" >/dev/null 2>&1
	find "$1/home/.claude/projects" -maxdepth 2 -type d -name memory | head -n 1
}

# template CELL: the replacement template of the cell.
template() {
	cp "$work/base/templates/build-reviewer-prompt.md" "$work/$1.md"
	case "$1" in
	survivor) printf '\n<!-- replay-sim: giveup=0.15 -->\n' >>"$work/$1.md" ;;
	worse) printf '\n<!-- replay-sim: flake=0.7 -->\n' >>"$work/$1.md" ;;
	faster) printf '\n<!-- replay-sim: duration=0.5 -->\n' >>"$work/$1.md" ;;
	esac
}

# verdict FILE: the first "verdict" of a --json document.
verdict() { sed -n 's/^ *"verdict": "\([a-z]*\)",$/\1/p' "$1" | head -n 1; }

# replicas RUN SEED FLAKE CELL ARGS...: one replicated replay; prints its verdict.
replicas() {
	run=$1 seed=$2 flake=$3 cell=$4
	shift 4
	(cd "$run/project" && HOME="$run/home" TMPDIR="$run/tmp" \
		"$work/replay" "$mem" --mutate "build-reviewer-prompt.md=$work/$cell.md" \
		--templates "$run/templates" --jobs "$JOBS" "$@" \
		--agent "builtin:sim?flake=$flake&seed=$seed" --now "$now" --json >"$work/result.json" 2>/dev/null) || true
	verdict "$work/result.json"
}

"$work/replay" demo --dir "$work/base" >/dev/null 2>&1
table="| Cell | Seeds | ADOPT | REJECT | UNDECIDED | errors | False decisions | Rate | 95% upper bound |
|---|---|---|---|---|---|---|---|---|"
for cell in $CELLS; do
	template "$cell"
	flake=0.05
	case "$cell" in survivor) flake=0.005 ;; worse | faster) flake=0.02 ;; esac
	adopt=0 reject=0 undecided=0 errors=0
	seed=$FIRST
	last=$((FIRST + SEEDS - 1))
	while [ "$seed" -le "$last" ]; do
		case "$cell" in
		noop) mem=$(demo "$work/run") && v=$(replicas "$work/run" "$seed" "$flake" "$cell" --replicas 10) ;;
		more)
			mem=$(demo "$work/run")
			v=$(replicas "$work/run" "$seed" "$flake" "$cell" --replicas 5)
			n=5
			while [ "$v" = undecided ] && [ "$n" -lt 40 ]; do
				v=$(replicas "$work/run" "$seed" "$flake" "$cell" --more 5)
				n=$((n + 5))
			done
			;;
		corpus)
			rm -rf "$work/c"
			mkdir -p "$work/c"
			for p in p1 p2 p3; do "$work/replay" demo --dir "$work/c/$p" >/dev/null 2>&1; done
			# One HOME holds the three runs: each is found from its project directory.
			mkdir -p "$work/c/home/.claude/projects"
			for p in p1 p2 p3; do cp -R "$work/c/$p/home/.claude/projects/." "$work/c/home/.claude/projects/"; done
			(cd "$work/c" && HOME="$work/c/home" TMPDIR="$work/c/p1/tmp" "$work/replay" corpus "$work/c/p1/project" "$work/c/p2/project" "$work/c/p3/project" \
				--mutate "build-reviewer-prompt.md=$work/$cell.md" --templates "$work/c/p1/templates" --replicas 10 --jobs "$JOBS" \
				--agent "builtin:sim?flake=$flake&seed=$seed" --now "$now" --out "$work/c/out" --json >"$work/result.json" 2>/dev/null) || true
			v=$(sed -n 's/^ *"verdict": "\([a-z]*\)",$/\1/p' "$work/result.json" | tail -n 1)
			;;
		*) mem=$(demo "$work/run") && v=$(replicas "$work/run" "$seed" "$flake" "$cell" --replicas 5 --until-decided --max-replicas 40) ;;
		esac
		case "$v" in
		adopt) adopt=$((adopt + 1)) ;;
		reject) reject=$((reject + 1)) ;;
		undecided) undecided=$((undecided + 1)) ;;
		*) errors=$((errors + 1)) ;;
		esac
		echo "$cell seed $seed: ${v:-error}"
		seed=$((seed + 1))
	done
	case "$cell" in
	noop | more | corpus) wrong=$((adopt + reject)) ;;
	survivor | worse) wrong=$adopt ;;
	faster) wrong=$reject ;;
	esac
	row=$(awk -v k="$wrong" -v n="$SEEDS" 'BEGIN {
		z = 1.959964; p = k / n
		c = (p + z*z/(2*n)) / (1 + z*z/n); h = z / (1 + z*z/n) * sqrt(p*(1-p)/n + z*z/(4*n*n))
		printf "%d | %.1f%% | %.1f%%", k, 100*p, 100*(c+h) }')
	line="| $cell | $SEEDS | $adopt | $reject | $undecided | $errors | $row |"
	echo "$line"
	table="$table
$line"
done
echo "$table"
if [ -n "$DOC" ]; then
	awk -v t="$table" -v when="$(date -u +%Y-%m-%d)" '
		/<!-- binary-calibration:begin -->/ {print; print "Generated by bench/ab_calibration.sh on " when " (seeds " '"$FIRST"' " to " '"$((FIRST + SEEDS - 1))"' "): do not edit by hand."; print ""; print t; skip=1; next}
		/<!-- binary-calibration:end -->/ {skip=0}
		!skip {print}' "$DOC" >"$DOC.tmp" && mv "$DOC.tmp" "$DOC"
fi
