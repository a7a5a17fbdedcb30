#!/usr/bin/env bash
# bench/share.sh — replay push/pull against git and cp, all measured in this one run.
#
# Rows (time is the minimum of RUNS runs, default 3, or their median with STAT=median;
# peak RSS from /usr/bin/time):
#  1. A run whose checkpoints hold a BENCH_FILES-file project (default 20,000):
#     first push to a directory store, an unchanged push (goal: <= 1/4 of the
#     first), `git bundle create --all` of the same checkpoints for scale, and a
#     push after one new checkpoint of 10 changed files (its new objects and
#     bytes, against the first push's).
#  2. A run holding a BENCH_MIB MiB file (default 1024): push and pull (time and
#     peak RSS) against `git bundle create --all` of its checkpoints plus `cp -r`
#     of its scratch dir (push), and `git clone` of that bundle plus `cp -r` back
#     (pull): the same bytes, moved by the standard tools. replay syncs every
#     file it writes (store objects on push, the pulled files on pull) before it
#     names them, so the goal's reference syncs the files it wrote too (`sync
#     FILE...`, an fsync each); the same reference without the sync is printed
#     beside it as information: it measures the page cache, not the work.
# Goals (ROW lines for bench/run.sh, ratios to the reference measured here): an
# unchanged push <= 0.25 of the first, the 1 GiB push <= 1.5x bundle + cp +
# sync, the 1 GiB pull <= 1.5x clone + cp + sync.
set -euo pipefail

FILES=${BENCH_FILES:-20000}
MIB=${BENCH_MIB:-1024}
RUNS=${RUNS:-3}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/replay-bench-share.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
TIME=/usr/bin/time
[ -x "$TIME" ] || { echo "bench/share.sh needs GNU time at /usr/bin/time (apt-get install time)" >&2; exit 1; }

(cd "$ROOT" && go build -o "$WORK/benchfixture" ./internal/testkit/benchfixture)
# REPLAY=path measures that binary instead of this tree's (a before and an after).
R=${REPLAY:-$WORK/replay}
[ -n "${REPLAY:-}" ] || (cd "$ROOT" && go build -o "$R" ./cmd/replay)
export GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=b@b GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=b@b

# measure NAME CMD...: runs CMD, prints "seconds peak-KiB" on stdout (its output to a log).
measure() {
	local out="$WORK/time.$$"
	"$TIME" -f '%e %M' -o "$out" "$@" >>"$WORK/log" 2>&1 || { cat "$WORK/log" >&2; exit 1; }
	cat "$out"
}

# best RUNS SETUP CMD...: the minimum time (and its RSS) of RUNS runs of CMD, SETUP run
# before each; with STAT=median, the median time (the lower middle of an even count) and
# the largest RSS.
best() {
	local setup=$1 min="" rss="" t m all=""
	shift
	for _ in $(seq "$RUNS"); do
		eval "$setup"
		read -r t m < <(measure "$@")
		all="$all $t"
		if [ -z "$min" ] || awk "BEGIN{exit !($t < $min)}"; then min=$t rss=$m; fi
		if [ "${STAT:-min}" = median ] && [ "$m" -gt "$rss" ]; then rss=$m; fi
	done
	if [ "${STAT:-min}" = median ]; then
		min=$(printf '%s\n' $all | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
	fi
	echo "$min $rss"
}

ratio() { awk "BEGIN{ if ($2 == 0) print \"-\"; else printf \"%.3f\", $1 / $2 }"; }

fixture() { # fixture DIR: a pipeline run (scratch dir, shadow checkpoints) under DIR
	"$WORK/benchfixture" -dir "$1" -dispatches 20 -commits 5 >"$1.env"
	SCRATCH=$(sed -n 's/^scratch=//p' "$1.env")
	HOME_DIR=$(sed -n 's/^home=//p' "$1.env")
	SHADOW=$(dirname "$SCRATCH")/checkpoints/$(basename "$(dirname "$SCRATCH")")
	PROJECT="$1/project"
}

checkpoint() { # checkpoint MSG: commit the project's tree into the shadow repository
	git --git-dir "$SHADOW" --work-tree "$PROJECT" add -A -f . >/dev/null
	git --git-dir "$SHADOW" --work-tree "$PROJECT" commit -q -m "$1"
}

push() { HOME="$HOME_DIR" "$R" push "$SCRATCH" --to "$1" --repo "$PROJECT" --json; }

echo "== replay push/pull vs git and cp (RUNS=$RUNS ${STAT:-min}, FILES=$FILES, MIB=$MIB) $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)"

# --- 1. incremental pushes of a 20,000-file project's checkpoints ---
fixture "$WORK/a"
(cd "$PROJECT" && for i in $(seq 0 $((FILES - 1))); do
	d="src/pkg$((i / 100))"
	[ $((i % 100)) -eq 0 ] && mkdir -p "$d"
	printf 'package p // file %d\nvar v%d = %d\n' "$i" "$i" "$((i * 7))" >"$d/file$i.go"
done)
checkpoint "checkpoint of $FILES files"
STORE="$WORK/store-a"
read -r first _ < <(best 'rm -rf "$STORE"; mkdir -p "$STORE"' bash -c "$(declare -f push); R=$R HOME_DIR=$HOME_DIR SCRATCH=$SCRATCH PROJECT=$PROJECT push $STORE")
firstobj=$(push "$STORE" | sed -n 's/.*"objects": \([0-9]*\).*/\1/p')
read -r again _ < <(best ':' bash -c "$(declare -f push); R=$R HOME_DIR=$HOME_DIR SCRATCH=$SCRATCH PROJECT=$PROJECT push $STORE")
read -r gitb _ < <(best 'rm -f "$WORK/a.bundle"' git --git-dir "$SHADOW" bundle create -q "$WORK/a.bundle" --all)
(cd "$PROJECT" && for i in $(seq 0 9); do f=$((i * FILES / 10)); echo "// changed" >>"src/pkg$((f / 100))/file$f.go"; done)
checkpoint "checkpoint after 10 changed files"
newcp=$(push "$STORE")
newobj=$(echo "$newcp" | sed -n 's/.*"new_objects": \([0-9]*\).*/\1/p')
newbytes=$(echo "$newcp" | sed -n 's/.*"new_bytes": \([0-9]*\).*/\1/p')
bundlebytes=$(stat -c %s "$WORK/a.bundle")
printf '%-52s %8s s\n' "first push, $FILES-file checkpoint" "$first"
printf '%-52s %8s s   ratio %s (goal <= 0.25)\n' "unchanged push" "$again" "$(ratio "$again" "$first")"
printf 'ROW\tunchanged push vs first push (%s files)\t%s\t%s\tratio<=0.25\n' "$FILES" "$again" "$first"
printf '%-52s %8s s   (unchanged push / this: %s)\n' "git bundle create --all of the checkpoints" "$gitb" "$(ratio "$again" "$gitb")"
printf '%-52s %8s objects, %s bytes uploaded (first push: %s objects; full bundle %s bytes)\n' \
	"push after a checkpoint of 10 changed files" "$newobj" "$newbytes" "$firstobj" "$bundlebytes"

# --- 2. a run holding a 1 GiB file ---
fixture "$WORK/b"
mkdir -p "$SCRATCH/recordings"
head -c $((MIB << 20)) </dev/urandom >"$SCRATCH/recordings/large.bin"
STORE="$WORK/store-b"
read -r pt pm < <(best 'rm -rf "$STORE"; mkdir -p "$STORE"' bash -c "$(declare -f push); R=$R HOME_DIR=$HOME_DIR SCRATCH=$SCRATCH PROJECT=$PROJECT push $STORE")
refpush() { rm -rf "$WORK/ref" && mkdir -p "$WORK/ref" && git --git-dir "$SHADOW" bundle create -q "$WORK/ref/run.bundle" --all && cp -r "$SCRATCH" "$WORK/ref/memory"; }
read -r rt rm_ < <(best ':' bash -c "$(declare -f refpush); WORK=$WORK SHADOW=$SHADOW SCRATCH=$SCRATCH refpush")
read -r rst _ < <(best ':' bash -c "$(declare -f refpush); WORK=$WORK SHADOW=$SHADOW SCRATCH=$SCRATCH refpush && find \"\$WORK/ref\" -type f -print0 | xargs -0 sync")
read -r lt lm < <(best 'rm -rf "$WORK/pulled"' env HOME="$HOME_DIR" "$R" pull "$STORE" --into "$WORK/pulled" --repo "$PROJECT")
refpull() { rm -rf "$WORK/refpulled" && git clone -q --bare "$WORK/ref/run.bundle" "$WORK/refpulled/shadow" && cp -r "$WORK/ref/memory" "$WORK/refpulled/memory"; }
read -r ft fm < <(best ':' bash -c "$(declare -f refpull); WORK=$WORK refpull")
read -r fst _ < <(best ':' bash -c "$(declare -f refpull); WORK=$WORK refpull && find \"\$WORK/refpulled\" -type f -print0 | xargs -0 sync")
printf '%-52s %8s s %6d MiB RSS\n' "push of a $MIB MiB run" "$pt" $((pm / 1024))
printf '%-52s %8s s %6d MiB RSS   time ratio %s\n' "git bundle create --all + cp -r (same bytes)" "$rt" $((rm_ / 1024)) "$(ratio "$pt" "$rt")"
printf '%-52s %8s s            time ratio %s\n' "  the same and sync of the files written" "$rst" "$(ratio "$pt" "$rst")"
printf '%-52s %8s s %6d MiB RSS\n' "pull of the $MIB MiB run" "$lt" $((lm / 1024))
printf '%-52s %8s s %6d MiB RSS   time ratio %s\n' "git clone of the bundle + cp -r (same bytes)" "$ft" $((fm / 1024)) "$(ratio "$lt" "$ft")"
printf '%-52s %8s s            time ratio %s\n' "  the same and sync of the files written" "$fst" "$(ratio "$lt" "$fst")"
printf 'ROW\tpush of %s MiB vs bundle + cp -r + sync\t%s\t%s\tratio<=1.5\n' "$MIB" "$pt" "$rst"
printf 'ROW\tpull of %s MiB vs clone + cp -r + sync\t%s\t%s\tratio<=1.5\n' "$MIB" "$lt" "$fst"
printf 'ROW\tpush of %s MiB vs bundle + cp -r (no sync)\t%s\t%s\t-\n' "$MIB" "$pt" "$rt"
printf 'ROW\tpull of %s MiB vs clone + cp -r (no sync)\t%s\t%s\t-\n' "$MIB" "$lt" "$ft"
printf 'ROW\tfirst push, %s-file checkpoint vs git bundle\t%s\t%s\t-\n' "$FILES" "$first" "$gitb"
echo "== done $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
