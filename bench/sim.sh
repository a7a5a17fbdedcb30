#!/usr/bin/env bash
# bench/sim.sh — seeds per second of the pipeline simulator's property test
# (issue 28 item 7): each seed generates a crashed run (internal/testkit/pipesim) and asks
# `replay plan --json` for the decision, in process, on every core.
#
#   SEEDS        seeds to judge (default 1000)
#   EXEC_EVERY   also execute the resume on every EXEC_EVERY-th seed (default: never,
#                to measure the plan alone; the default test run uses 10)
#   XSEEDS       seeds of the end-to-end crash simulator (issue 36; default 200;
#                0 skips it): generate, crash up to three times, resume in
#                process with the simulated agent, continue, judge the end state
#   XBIN         how many of them also run through the binary and the simagent
#                process (default 16; 0 none)
#   SIM_TMPDIR   where the seeds' runs are written (default: a fresh directory
#                on /dev/shm, removed at the end, when there is one)
#
# Prints the seeds per second of the whole property test, then of the generator
# alone (BenchmarkGenerate). The property test's own verdict (it fails while the
# resume bugs of issue 28 are open) does not stop the measurement.
set -euo pipefail

SEEDS=${SEEDS:-1000}
EXEC_EVERY=${EXEC_EVERY:-100000000}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

# Every seed writes thousands of small files: on tmpfs (/dev/shm) when there is
# one, so the figures are the simulator's and the product's, not the disk's.
if [ -z "${SIM_TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then
	SIM_TMPDIR=$(mktemp -d /dev/shm/replay-sim.XXXXXX)
	trap 'rm -rf "$SIM_TMPDIR"' EXIT
fi
if [ -n "${SIM_TMPDIR:-}" ]; then
	export TMPDIR=$SIM_TMPDIR
fi
# the machine's load, since wall times on a shared machine mean little: the
# CPU per seed is the figure to compare
printf 'TMPDIR %s; load average at the start: %s\n' "${TMPDIR:-/tmp}" "$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)"

out=$(REPLAY_SIM_SEEDS=$SEEDS REPLAY_SIM_EXEC_EVERY=$EXEC_EVERY \
	go test ./cmd/replay/internal/cli/ -run '^TestSimulatedRunsResume$' -count=1 -v 2>&1 || true)
line=$(printf '%s\n' "$out" | grep -Eo '[0-9]+ seeds in [0-9.]+(ms|s|m[0-9.]+s)' | head -1)
if [ -z "$line" ]; then
	printf '%s\n' "$out" | tail -20
	echo "bench/sim.sh: the property test printed no timing" >&2
	exit 1
fi
n=${line%% *}
dur=${line##* }
secs=$(awk -v d="$dur" 'BEGIN {
	if (d ~ /ms$/) { sub(/ms$/, "", d); print d / 1000 }
	else if (d ~ /m/) { split(d, a, "m"); sub(/s$/, "", a[2]); print a[1] * 60 + a[2] }
	else { sub(/s$/, "", d); print d }
}')
printf 'property test: %d seeds in %.2f s = %.1f seeds/s (GOMAXPROCS %s, resume executed every %s. seed)\n' \
	"$n" "$secs" "$(awk -v n="$n" -v s="$secs" 'BEGIN { print n / s }')" "$(nproc)" "$EXEC_EVERY"
printf '%s\n' "$out" | grep -E '^\s+boundary equals ' | sed 's/^ */  /' || true

gen=$(go test ./internal/testkit/pipesim/ -run '^$' -bench '^BenchmarkGenerate$' -benchtime 200x 2>&1 | grep -E '^BenchmarkGenerate')
ns=$(printf '%s\n' "$gen" | awk '{ print $3 }')
printf 'generator alone: %.1f seeds/s on one goroutine (%s ns/seed)\n' "$(awk -v ns="$ns" 'BEGIN { print 1e9 / ns }')" "$ns"
# how often the end-to-end generator makes each shape it decides before the run (pipesim.XShapeFrequencies)
go test ./internal/testkit/pipesim/ -run '^TestXShapeFrequencies$' -count=1 -v 2>&1 | sed -n '/scenario shapes over/,/^--- /p' | grep -v '^--- ' | sed 's/^ *xstate_test.go:[0-9]*: /  /'

# The end-to-end crash simulator (issue 36): seeds/s in process (the product's
# resume use case with the simulated agent as an agent.Agent) and through the
# binary (a replay process per resume, a simagent process per dispatch), the
# CPU each path spends per seed, where the in-process time goes, crashes per
# seed, precision and the frequency of every fault shape it made.
XSEEDS=${XSEEDS:-200}
XBIN=${XBIN:-16}
if [ "$XSEEDS" -gt 0 ]; then
	xout=$(REPLAY_XSIM_SEEDS=$XSEEDS REPLAY_XSIM_BIN_SEEDS=$XBIN go test ./e2e/ -run '^TestSimCrashEquivalence$' -count=1 -v 2>&1 || true)
	xline=$(printf '%s\n' "$xout" | grep -Eo '[0-9]+ seeds end to end in [^ ]+ \([0-9.]+ seeds/s\) in process, CPU [^ ]+ \([^ ]+ per seed\)' | head -1)
	if [ -z "$xline" ]; then
		printf '%s\n' "$xout" | tail -20
		echo "bench/sim.sh: the end-to-end simulator printed no timing" >&2
		exit 1
	fi
	printf 'end to end, in process: %s (GOMAXPROCS %s)\n' "$xline" "$(nproc)"
	bline=$(printf '%s\n' "$xout" | grep -Eo '[0-9]+ seeds end to end in [^ ]+ \([0-9.]+ seeds/s\) through the binary, CPU [^ ]+ with its processes \([^ ]+ per seed\)' | head -1 || true)
	if [ -n "$bline" ]; then
		printf 'end to end, through the binary: %s\n' "$bline"
	fi
	# seeds/s the CPU per seed allows on the machine's cores, were they idle
	cpu=$(printf '%s\n' "$xline" | sed -E 's/.*\(([0-9.]+)(ms|s|µs) per seed\).*/\1 \2/')
	printf '%s\n' "$cpu" | awk -v cores="$(nproc)" '{ s = $1; if ($2 == "ms") s /= 1000; else if ($2 == "µs") s /= 1e6;
		if (s > 0) printf "  in process on %d idle cores: %.0f seeds/s (CPU-bound); REPLAY_STRESS=1 (100,000 seeds) in %.0f min\n", cores, cores / s, 100000 * s / cores / 60 }'
	printf '%s\n' "$xout" | grep -E '^\s+(stages in process|end state equals|precision|shapes made|pending seed)' | sed 's/^ */  /; s/; /;\n    /g'
	printf 'load average at the end: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)"
fi
