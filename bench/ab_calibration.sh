#!/bin/sh
# ab_calibration.sh: the A/B rule's false-decision rate (and power) measured on
# the real binary, SEEDS seeded experiments per cell.
#
# Each experiment replays the demo's crashed pipeline (`replay demo --crashed`:
# 9 dispatches re-run per replica) with builtin:sim?flake=FLAKE&seed=N and the
# cell's replacement for build-reviewer-prompt.md, from a fresh copy of the
# pipeline, and records the verdict. A false decision is an ADOPT or REJECT of a
# no-op, an ADOPT of a survivor or worse template, a REJECT of a faster one.
# Cells (CELLS, space-separated):
#
#   noop      byte-identical template, --replicas 10
#   more      the same, a user who starts with --replicas 5 and runs --more 5
#             again and again until decided or 40 replicas per arm
#   corpus    byte-identical template over 3 independent pipelines (their own
#             project directories, so their own draws) of different difficulty
#             (replay-sim: difficulty 0, 0.5, 1 in their recorded dispatches),
#             replay corpus --replicas 10
#   survivor  the template gives up on its slowest work (replay-sim: giveup=0.15
#             on the reviewer dispatches; flake 0.005: pass ~0.99 -> ~0.73, no
#             real speed change), --replicas 5 --until-decided --max-replicas 40
#   worse     replay-sim: flake=0.7 (pass ~0.83 -> ~0.08), same design
#   faster    replay-sim: duration=0.5, same design
#
# The until-decided cells run with --jobs STEP (default 10): the rule looks after
# every STEP/2 pairs rather than after every pair (the decision is anytime-valid
# either way; fewer looks cost less). Everything runs under WORK (default: a new
# directory in /dev/shm when there is one: file creation there costs a tenth of
# ext4's). PAR experiments run at once (default 2).
#
#   SEEDS=200 DOC=docs/ab-statistics.md nice -n 10 bench/ab_calibration.sh
#   SEEDS=2 CELLS="noop worse" bench/ab_calibration.sh        # a smoke run
#
# OUT=DIR keeps the per-experiment results (OUT/results/CELL/SEED: verdict and
# replicas per arm) and the progress log (OUT/progress.log): run the same command
# again after a kill and the finished experiments are not run again. With
# DOC=FILE the table is written between the binary-calibration markers of FILE
# (generated: do not edit by hand). REPLAY=BIN uses that binary instead of
# building one. TABLE_ONLY=1 runs nothing: it tabulates the results OUT holds
# (a run still going, or one stopped short: each cell's Seeds column then says
# how many of its seeds are done).
set -eu
SEEDS=${SEEDS:-200}
FIRST=${FIRST:-1}
CELLS=${CELLS:-noop more corpus survivor worse faster}
PAR=${PAR:-2}
STEP=${STEP:-10}
DOC=${DOC:-}
root=$(cd "$(dirname "$0")/.." && pwd)
base=/tmp
[ -d /dev/shm ] && [ -w /dev/shm ] && base=/dev/shm
work=${WORK:-$(mktemp -d "$base/replay-ab-calibration.XXXXXX")}
mkdir -p "$work"
case "${WORK:-}" in
"") trap 'rm -rf "$work"' EXIT ;;
esac
out=${OUT:-$work/out}
mkdir -p "$out/results"
progress=$out/progress.log
if [ -n "${REPLAY:-}" ] || [ -n "${TABLE_ONLY:-}" ]; then
	bin=${REPLAY:-replay}
else
	bin=$work/replay
	(cd "$root" && go build -o "$bin" ./cmd/replay)
fi
now=2026-04-06T02:02:41Z
# A larger heap before each collection: a fifth less CPU, the same results.
export GOGC=${GOGC:-400}
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null

# crashed DIR: a fresh crashed demo pipeline in DIR.
crashed() {
	rm -rf "$1"
	"$bin" demo --crashed "$1" >/dev/null 2>&1 || {
		echo "ab_calibration.sh: replay demo --crashed $1 failed" >&2
		exit 1
	}
}

# scratch DIR: the scratch (memory) directory of the pipeline built in DIR.
scratch() { ls -d "$1"/home/.claude/projects/*/memory | head -n 1; }

# harden DIR D: the pipeline in DIR is made harder: every recorded dispatch of its
# phase 3 carries "replay-sim: difficulty=D" in its context.
harden() {
	for f in "$(scratch "$1")"/crucible-dispatch-*/1[1-9]-*.md; do
		case "$f" in *-findings.md) continue ;; esac
		printf '\nreplay-sim: difficulty=%s\n' "$2" >>"$f"
	done
}

# setup SLOT: the pristine pipelines of worker SLOT, built at the paths the
# experiments use (a pipeline is bound to its project directory's path), then
# kept aside as SLOT.orig to copy back before every experiment.
setup() {
	s=$work/s$1
	if [ ! -d "$s.orig" ]; then
		rm -rf "$s"
		mkdir -p "$s/c/home/.claude/projects"
		crashed "$s/one"
		for p in p1 p2 p3; do crashed "$s/c/$p"; done
		harden "$s/c/p2" 0.5
		harden "$s/c/p3" 1
		# One HOME holds the corpus's three runs: each is found from its project directory.
		for p in p1 p2 p3; do cp -R "$s/c/$p/home/.claude/projects/." "$s/c/home/.claude/projects/"; done
		mv "$s" "$s.orig"
	fi
}

# fresh SLOT WHAT: WHAT (one or c) of worker SLOT as it was built.
fresh() {
	rm -rf "$work/s$1/$2"
	mkdir -p "$work/s$1"
	cp -R "$work/s$1.orig/$2" "$work/s$1/$2"
}

# template CELL: the replacement template of the cell.
template() {
	cp "$work/s0.orig/one/templates/build-reviewer-prompt.md" "$work/$1.md"
	case "$1" in
	survivor) printf '\n<!-- replay-sim: giveup=0.15 -->\n' >>"$work/$1.md" ;;
	worse) printf '\n<!-- replay-sim: flake=0.7 -->\n' >>"$work/$1.md" ;;
	faster) printf '\n<!-- replay-sim: duration=0.5 -->\n' >>"$work/$1.md" ;;
	esac
}

# verdict FILE: the decision of a --json document (a replicated replay's
# decision, or a corpus's aggregate: both are the only "verdict" four spaces in).
verdict() { sed -n 's/^    "verdict": "\([a-z]*\)",$/\1/p' "$1" | head -n 1; }

# perarm FILE: the replicas per arm of a replicated replay's --json document.
perarm() { grep -c '"arm": "mutated"' "$1" || true; }

# replay SLOT SEED CELL ARGS...: one replicated replay in worker SLOT's pipeline;
# its --json document goes to SLOT's result.json.
replay() {
	r=$work/s$1/one res=$work/s$1/result.json seed=$2 cell=$3
	shift 3
	(cd "$r/project" && HOME="$r/home" TMPDIR="$r/tmp" REPLAY_SYSTEM_TMP="$r/systmp" \
		"$bin" "$(scratch "$r")" --mutate "build-reviewer-prompt.md=$work/$cell.md" \
		--templates "$r/templates" "$@" \
		--agent "builtin:sim?flake=$flake&seed=$seed" --now "$now" --json >"$res" 2>"$work/s$slot/stderr") || true
}

# experiment SLOT CELL SEED: one experiment; writes its result file.
experiment() {
	slot=$1 cell=$2 seed=$3
	res=$work/s$slot/result.json
	rm -f "$res"
	flake=0.05
	case "$cell" in survivor) flake=0.005 ;; worse | faster) flake=0.02 ;; esac
	start=$(date +%s)
	case "$cell" in
	noop)
		fresh "$slot" one
		replay "$slot" "$seed" "$cell" --replicas 10 --jobs 2
		v=$(verdict "$res") n=$(perarm "$res")
		;;
	more)
		fresh "$slot" one
		replay "$slot" "$seed" "$cell" --replicas 5 --jobs 2
		v=$(verdict "$res") n=$(perarm "$res")
		while [ "$v" = undecided ] && [ "$n" -lt 40 ]; do
			replay "$slot" "$seed" "$cell" --more 5 --jobs 2
			v=$(verdict "$res") m=$(perarm "$res")
			[ "$m" -gt "$n" ] || v=error # an experiment that was not extended
			n=$m
		done
		;;
	corpus)
		fresh "$slot" c
		c=$work/s$slot/c
		(cd "$c" && HOME="$c/home" TMPDIR="$c/p1/tmp" REPLAY_SYSTEM_TMP="$c/p1/systmp" "$bin" corpus "$c/p1/project" "$c/p2/project" "$c/p3/project" \
			--mutate "build-reviewer-prompt.md=$work/$cell.md" --templates "$c/p1/templates" --replicas 10 --jobs 2 \
			--agent "builtin:sim?flake=$flake&seed=$seed" --now "$now" --out "$c/out" --json >"$res" 2>"$work/s$slot/stderr") || true
		v=$(verdict "$res") n=10
		;;
	*)
		fresh "$slot" one
		replay "$slot" "$seed" "$cell" --replicas 5 --until-decided --max-replicas 40 --jobs "$STEP"
		v=$(verdict "$res") n=$(perarm "$res")
		;;
	esac
	case "$v" in adopt | reject | undecided) ;; *)
		v=error
		cp "$work/s$slot/stderr" "$out/results/$cell/$seed.stderr" 2>/dev/null || true
		;;
	esac
	printf '%s %s\n' "$v" "$n" >"$out/results/$cell/$seed"
	printf '%s %s seed %s: %s at %s per arm (%ss)\n' "$(date -u +%H:%M:%S)" "$cell" "$seed" "$v" "$n" "$(($(date +%s) - start))" >>"$progress"
}

# worker SLOT CELL: the seeds of CELL that fall to SLOT and are not done yet.
worker() {
	seed=$((FIRST + $1))
	last=$((FIRST + SEEDS - 1))
	while [ "$seed" -le "$last" ]; do
		[ -f "$out/results/$2/$seed" ] || experiment "$1" "$2" "$seed"
		seed=$((seed + PAR))
	done
}

# upper K N: the upper end of the exact (Clopper-Pearson) 95% interval of K
# successes in N trials, in percent: the p at which P(X <= K) = 0.025.
upper() {
	awk -v k="$1" -v n="$2" 'function cdf(p,   i, s, t) {
		if (p >= 1) return 0
		s = 0
		for (i = 0; i <= k; i++) {
			t = lgam(n + 1) - lgam(i + 1) - lgam(n - i + 1) + i * log(p) + (n - i) * log(1 - p)
			s += exp(t)
		}
		return s
	}
	function lgam(x,   s) { s = 0; while (x > 1) { x--; s += log(x) }; return s }
	BEGIN {
		if (k >= n) { printf "100.0%%"; exit }
		lo = k / n; hi = 1
		for (it = 0; it < 60; it++) { mid = (lo + hi) / 2; if (cdf(mid) > 0.025) lo = mid; else hi = mid }
		printf "%.1f%%", 100 * hi
	}'
}

begin=$(date +%s)
if [ -z "${TABLE_ONLY:-}" ]; then
	echo "$(date -u +%H:%M:%S) start: cells $CELLS, seeds $FIRST to $((FIRST + SEEDS - 1)), $PAR at once, in $work" >>"$progress"
	i=0
	while [ "$i" -lt "$PAR" ]; do
		setup "$i"
		i=$((i + 1))
	done
fi
table="| Cell | Seeds | ADOPT | REJECT | UNDECIDED | errors | Replicas per arm (mean) | False decisions | Rate | Exact 95% upper bound | Decided right |
|---|---|---|---|---|---|---|---|---|---|---|"
failed=0
for cell in $CELLS; do
	case "$cell" in noop | more | corpus | survivor | worse | faster) ;; *)
		echo "ab_calibration.sh: unknown cell $cell; give some of: noop more corpus survivor worse faster" >&2
		exit 2
		;;
	esac
	mkdir -p "$out/results/$cell"
	if [ -z "${TABLE_ONLY:-}" ]; then
		template "$cell"
		i=0
		while [ "$i" -lt "$PAR" ]; do
			worker "$i" "$cell" &
			i=$((i + 1))
		done
		wait
	fi
	adopt=0 reject=0 undecided=0 errors=0 reps=0 ran=0
	seed=$FIRST
	while [ "$seed" -le $((FIRST + SEEDS - 1)) ]; do
		if [ ! -f "$out/results/$cell/$seed" ]; then
			seed=$((seed + 1))
			continue
		fi
		ran=$((ran + 1))
		read -r v n <"$out/results/$cell/$seed"
		case "$v" in
		adopt) adopt=$((adopt + 1)) ;;
		reject) reject=$((reject + 1)) ;;
		undecided) undecided=$((undecided + 1)) ;;
		*) errors=$((errors + 1)) ;;
		esac
		reps=$((reps + n))
		seed=$((seed + 1))
	done
	[ "$ran" -gt 0 ] || continue
	failed=$((failed + errors))
	right=-
	case "$cell" in
	noop | more | corpus) wrong=$((adopt + reject)) ;;
	survivor | worse) wrong=$adopt right="reject $(awk -v k="$reject" -v n="$ran" 'BEGIN { printf "%.1f%%", 100 * k / n }')" ;;
	faster) wrong=$reject right="adopt $(awk -v k="$adopt" -v n="$ran" 'BEGIN { printf "%.1f%%", 100 * k / n }')" ;;
	esac
	line="| $cell | $ran | $adopt | $reject | $undecided | $errors | $(awk -v r="$reps" -v n="$ran" 'BEGIN { printf "%.1f", r / n }') | $wrong | $(awk -v k="$wrong" -v n="$ran" 'BEGIN { printf "%.1f%%", 100 * k / n }') | $(upper "$wrong" "$ran") | $right |"
	echo "$line"
	[ -n "${TABLE_ONLY:-}" ] || echo "$(date -u +%H:%M:%S) $line" >>"$progress"
	table="$table
$line"
done
took=$(($(date +%s) - begin))
echo "$table"
[ -n "${TABLE_ONLY:-}" ] || echo "$(date -u +%H:%M:%S) done in ${took}s" >>"$progress"
if [ -n "$DOC" ]; then
	if [ -n "${TABLE_ONLY:-}" ]; then
		how="Tabulated by \`TABLE_ONLY=1 bench/ab_calibration.sh\` on $(date -u +%Y-%m-%d) from the results of a run of seeds $FIRST to $((FIRST + SEEDS - 1)) per cell ($PAR at once, niced, on a shared two-core machine): the Seeds column is how many of them each cell has finished; a cell not listed has none yet."
	else
		how="Generated by \`bench/ab_calibration.sh\` on $(date -u +%Y-%m-%d) (seeds $FIRST to $((FIRST + SEEDS - 1)) per cell, $PAR at once; $((took / 60)) min)."
	fi
	awk -v t="$table" -v how="$how" '
		/<!-- binary-calibration:begin -->/ {
			print
			print how " Do not edit by hand. A false decision is an ADOPT or REJECT of a no-op, an ADOPT of a worse or survivor template, a REJECT of a faster one; the bound is the upper end of the exact (Clopper-Pearson) 95% interval; \"decided right\" is the power of the true-effect cells."
			print ""
			print t
			skip = 1
			next
		}
		/<!-- binary-calibration:end -->/ { skip = 0 }
		!skip { print }' "$DOC" >"$DOC.tmp" && mv "$DOC.tmp" "$DOC"
fi
if [ "$failed" -gt 0 ]; then
	echo "ab_calibration.sh: $failed experiments ended in an error, not a verdict (their stderr: $out/results/CELL/SEED.stderr); the first one's:" >&2
	for f in "$out"/results/*/*.stderr; do
		tail -n 5 "$f" >&2
		break
	done
	exit 1
fi
