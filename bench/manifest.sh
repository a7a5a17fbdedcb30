#!/usr/bin/env bash
# bench/manifest.sh — parse + dedupe of a manifest.jsonl by the replay binary
# (`replay manifest stats`, which reads tolerantly, dedupes by seq and counts; a hidden
# command built only with -tags replay_bench, never into the shipped binary) against
# `jq -c . >/dev/null` on the same file, in one run, at BENCH_LINES lines (default
# 100,000; goal ratio <= 0.2) and BENCH_BIG_LINES lines (default 1,000,000, with the
# same distinct seqs; goal ratio <= 0.15). Also peak RSS, to show memory grows with
# the number of distinct seqs, not with the file size.
#
# Prints a table and, for bench/run.sh, lines "ROW<TAB>name<TAB>ours_s<TAB>ref_s<TAB>goal".
# Env: BENCH_LINES, BENCH_BIG_LINES, RUNS (minimum of, default 5).
set -euo pipefail
cd "$(dirname "$0")/.."

LINES=${BENCH_LINES:-${LINES:-100000}}
BIG=${BENCH_BIG_LINES:-1000000}
RUNS=${RUNS:-5}
command -v jq >/dev/null || { echo "bench/manifest.sh: jq is not installed (apt-get install jq)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -tags replay_bench -o "$work/replay" ./cmd/replay

# gen N SEQS: N lines, each seq dispatched then completed, seqs cycling over SEQS.
gen() {
  awk -v n="$1" -v seqs="$2" 'BEGIN {
    for (i = 0; i < n; i++) {
      seq = int(i / 2) % seqs + 1; ph = 1 + seq % 4; tk = seq % 7
      if (i % 2 == 0)
        printf "{\"seq\":%d,\"file\":\"%d-build-implementer.md\",\"role\":\"build-implementer\",\"phase\":\"%d\",\"task\":%d,\"status\":\"dispatched\",\"duration_s\":null,\"summary\":null,\"input_chars\":%d,\"output_chars\":null,\"model_tier\":\"opus\",\"tool_calls\":null}\n", seq, seq, ph, tk, 10000 + seq
      else
        printf "{\"seq\":%d,\"file\":\"%d-build-implementer.md\",\"role\":\"build-implementer\",\"phase\":\"%d\",\"task\":%d,\"status\":\"completed\",\"duration_s\":%d.5,\"summary\":\"Task %d done, %d tests pass\",\"input_chars\":%d,\"output_chars\":%d,\"model_tier\":\"opus\",\"tool_calls\":%d}\n", seq, seq, ph, tk, seq % 600, tk, seq % 9, 10000 + seq, 4000 + seq, seq % 40
    }
  }'
}

# best SECONDS of RUNS runs of a command (stdout discarded).
best() {
  local best_ns="" start end d
  for _ in $(seq "$RUNS"); do
    start=$(date +%s%N)
    "$@" >/dev/null
    end=$(date +%s%N)
    d=$((end - start))
    if [ -z "$best_ns" ] || [ "$d" -lt "$best_ns" ]; then best_ns=$d; fi
  done
  awk -v ns="$best_ns" 'BEGIN { printf "%.4f", ns / 1e9 }'
}

# peak RSS in KiB of one run, "-" without GNU time.
rss() {
  if [ -x /usr/bin/time ] && /usr/bin/time -f %M true >/dev/null 2>&1; then
    /usr/bin/time -f %M -o "$work/rss" "$@" >/dev/null
    tail -1 "$work/rss"
  else
    echo "-"
  fi
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }

mkdir -p "$work/a" "$work/b" "$work/c"
gen "$LINES" $((LINES / 2)) >"$work/a/manifest.jsonl"            # LINES lines, LINES/2 seqs
gen "$BIG" $((LINES / 2)) >"$work/b/manifest.jsonl"              # BIG lines, same seqs
gen "$BIG" $((BIG / 2)) >"$work/c/manifest.jsonl"                # BIG lines, BIG/2 seqs

"$work/replay" manifest stats "$work/a/manifest.jsonl" | grep -q "^entries $((LINES / 2))$" \
  || { echo "bench/manifest.sh: replay manifest stats miscounted" >&2; exit 1; }

printf '%-40s | %10s | %10s | %8s\n' benchmark ours "reference" ratio
printf '%-40s-+-%10s-+-%10s-+-%8s\n' "----------------------------------------" ---------- ---------- --------
row() { # name ours ref goal
  printf '%-40s | %10s | %10s | %8s\n' "$1" "$2" "$3" "$(ratio "$2" "$3")"
  rows+=("$(printf 'ROW\t%s\t%s\t%s\t%s' "$1" "$2" "$3" "$4")")
}
rows=()
for set in a b; do
  f="$work/$set/manifest.jsonl"
  n=$(wc -l <"$f" | tr -d ' ')
  goal="ratio<=0.2"; [ "$set" = b ] && goal="ratio<=0.15"
  row "parse+dedupe ${n} lines" "$(best "$work/replay" manifest stats "$f")" "$(best jq -c . "$f")" "$goal"
done

echo
echo "peak RSS (KiB): replay manifest stats vs jq -c . (jq streams and keeps nothing)"
for set in a b c; do
  f="$work/$set/manifest.jsonl"
  n=$(wc -l <"$f" | tr -d ' ')
  seqs=$("$work/replay" manifest stats "$f" | awk '/^entries/ { print $2 }')
  size=$(du -k "$f" | cut -f1)
  printf '  %8s lines %8s seqs %8s KiB file: replay %8s KiB, jq %8s KiB\n' "$n" "$seqs" "$size" "$(rss "$work/replay" manifest stats "$f")" "$(rss jq -c . "$f")"
done
echo
printf '%s\n' "${rows[@]}"
