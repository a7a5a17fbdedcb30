#!/usr/bin/env bash
# bench/testtime.sh — how long the README's `go test ./...` takes, warm, and where it goes.
#
# On a shared machine the wall clock says little, so the CPU (user + sys of the go command
# and every process it waited for) is printed beside it, with the load average before and
# after; (user + sys) / 2 estimates the wall clock on two idle cores (go test keeps both
# busy: it runs two actions at once, links and test binaries alike, and the large test
# packages run their tests in parallel).
#
#  1. `go test -count=1 -json ./...`, twice (the first warms the build and vet caches):
#     wall, user, sys, the estimate, and the packages and top-level tests that took the
#     longest (elapsed, so inflated by the load);
#  2. `go test -count=1 -run '^$' ./...`: compiling (cached) and linking the test binaries
#     and starting them with no test to run: the part no test change removes;
#  3. with PERPKG=1, every package's test binary built once and run alone, one after the
#     other: its CPU with its child processes (headless Chromium's are not all counted).
#
# Usage: bash bench/testtime.sh   (RUNS=1: one full run; SHOW=20: list more rows;
# PERPKG=1: the per-package CPU, a few minutes more)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-2}
SHOW=${SHOW:-12}
PERPKG=${PERPKG:-0}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/replay-bench-testtime.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
TIME=/usr/bin/time
[ -x "$TIME" ] || { echo "needs GNU time at /usr/bin/time (apt-get install time)" >&2; exit 1; }
load() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime; }

summary() { # summary JSON TIMEFILE LABEL
	python3 - "$1" "$2" "$3" "$SHOW" <<'EOF'
import json, sys
path, timefile, label, show = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
wall, user, sys_ = open(timefile).read().split()[-3:]
wall, user, sys_ = float(wall), float(user), float(sys_)
pk, tests, failed = {}, [], []
for line in open(path):
    try:
        e = json.loads(line)
    except ValueError:
        continue
    if e.get("Action") == "fail":
        failed.append((e.get("Package", ""), e.get("Test", "")))
    if e.get("Action") in ("pass", "fail", "skip") and "Elapsed" in e:
        p = e["Package"].split("/replay/", 1)[-1]
        if e.get("Test"):
            if "/" not in e["Test"]:
                tests.append((e["Elapsed"], p, e["Test"]))
        else:
            pk[p] = e["Elapsed"]
print(f"{label}: {wall:.1f} s wall, {user:.1f} s user + {sys_:.1f} s sys = {user + sys_:.1f} s CPU; "
      f"on two idle cores about {(user + sys_) / 2:.0f} s")
if failed:
    print("  FAILED:", ", ".join(f"{p} {t}".strip() for p, t in failed[:10]))
print("  packages (elapsed s):", ", ".join(f"{p} {t:.1f}" for p, t in sorted(pk.items(), key=lambda x: -x[1])[:show]))
print("  tests (elapsed s):   ", ", ".join(f"{p}.{t} {s:.1f}" for s, p, t in sorted(tests, reverse=True)[:show]))
EOF
}

for i in $(seq "$RUNS"); do
	before=$(load)
	"$TIME" -f "%e %U %S" -o "$WORK/time.$i" go test -count=1 -json ./... >"$WORK/run.$i.json" 2>"$WORK/stderr.$i" || true
	summary "$WORK/run.$i.json" "$WORK/time.$i" "go test -count=1 ./... (run $i, load $before -> $(load))"
done

before=$(load)
"$TIME" -f "%e %U %S" -o "$WORK/time.link" go test -count=1 -run '^$' ./... >/dev/null 2>&1 || true
read -r w u s <"$WORK/time.link"
echo "go test -count=1 -run '^\$' ./... (build, link, start; load $before -> $(load)): $w s wall, $u s user + $s s sys"

if [ "$PERPKG" = 1 ]; then
	echo "per package, each test binary alone (s CPU with its child processes, s wall):"
	mod=$(go list -m)
	for p in $(go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}' ./...); do
		rel=${p#"$mod"}
		rel=${rel#/}
		bin="$WORK/$(echo "$rel" | tr / _).test"
		go test -c -o "$bin" "$p"
		(cd "$rel" && "$TIME" -f "%U %S %e" -o "$WORK/pkg.time" "$bin" -test.count=1 -test.timeout=20m >/dev/null 2>&1) || echo "  $rel FAILED"
		awk -v rel="$rel" '{print $1 + $2, $3, rel}' "$WORK/pkg.time" >>"$WORK/perpkg"
		rm -f "$bin"
	done
	sort -rn "$WORK/perpkg" | head -n "$SHOW" | awk '{printf "  %7.1f %7.1f  %s\n", $1, $2, $3}'
	awk '{c += $1} END {printf "  total %.1f s CPU\n", c}' "$WORK/perpkg"
fi
