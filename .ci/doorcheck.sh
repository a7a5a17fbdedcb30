#!/usr/bin/env bash
# doorcheck (issue 38): every file the replay binary touches goes through its
# doors. Runs the analyzer over the packages the binary is built from and
# compares what it reports with the shrinking list of calls not yet routed.
set -euo pipefail
cd "$(dirname "$0")/.."
baseline=internal/analysis/doorcheck/baseline.txt
pkgs=$(go list -deps ./cmd/replay | grep '^github.com/replaytool/replay')
out=$(mktemp); trap 'rm -f "$out" "$out.found" "$out.want"' EXIT
go build -o "$out.bin" ./internal/analysis/doorcheck/cmd/doorcheck
set +e
"$out.bin" $pkgs >"$out" 2>&1
rc=$?
set -e
rm -f "$out.bin"
if [ "$rc" -ne 0 ] && [ "$rc" -ne 3 ]; then
  cat "$out"; echo "doorcheck failed to run (exit $rc)"; exit 1
fi
if grep -vqE '^/.*:[0-9]+:[0-9]+: ' "$out"; then
  cat "$out"; echo "doorcheck printed something other than findings"; exit 1
fi
sed -E "s|^$PWD/||; s|:[0-9]+:[0-9]+: ([^ ]+) .*|: \1|" "$out" | sort >"$out.found"
{ grep -v '^#' "$baseline" || true; } | sort >"$out.want" # an empty list is no error
new=$(comm -13 "$out.want" "$out.found")
gone=$(comm -23 "$out.want" "$out.found")
if [ -n "$new" ]; then
  echo "doorcheck: calls that bypass replay's file doors:"
  grep -F -f <(echo "$new" | sed -E 's/: [^ ]+$//' | sort -u) "$out" || true
  exit 1
fi
if [ -n "$gone" ]; then
  echo "doorcheck: these calls are routed or annotated now; delete their lines from $baseline:"
  echo "$gone"; exit 1
fi
echo "doorcheck: ok ($(wc -l <"$out.found") calls left in $baseline)"
