#!/usr/bin/env bash
# bench/run.sh — runs every bench/*.sh (but itself) and prints one table of our
# figure, the reference tool's figure (the git binary, jq) measured in the same run,
# and the ratio ours/reference, so any change can be compared in one run.
#
# Each script prints, besides its own report, lines "ROW<TAB>name<TAB>ours_s<TAB>ref_s".
# Usage: bench/run.sh [NAME...]   (names without .sh; default: all)
set -euo pipefail
cd "$(dirname "$0")"

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
for s in "${scripts[@]}"; do
  echo "== $s" >&2
  if ! bash "./$s" | tee /dev/stderr | grep -P '^ROW\t' | sed "s/^ROW\t/${s%.sh}\t/" >>"$rows"; then
    echo "bench/run.sh: $s failed" >&2
    status=1
  fi
done

echo
printf '%-10s %-36s %12s %12s %8s\n' script benchmark "ours (s)" "ref (s)" ratio
printf '%-10s %-36s %12s %12s %8s\n' ---------- ------------------------------------ ------------ ------------ --------
awk -F'\t' '{
  ratio = ($4 > 0) ? sprintf("%.2f", $3 / $4) : "-"
  printf "%-10s %-36s %12.4f %12.4f %8s\n", $1, $2, $3, $4, ratio
}' "$rows"
exit $status
