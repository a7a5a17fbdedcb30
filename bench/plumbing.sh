#!/usr/bin/env bash
# bench/plumbing.sh — replay's own git plumbing (internal/gitrepo) against go-git doing the
# same job on the same input, in one run: the figures of docs/git-plumbing.md's table.
# Each figure is the minimum of RUNS (default 5) runs of a Go benchmark of
# internal/gitrepo/plumbing_bench_test.go, indexenc_test.go and indexdec_test.go:
#  - 2,000 small blobs written as one synced pack + index (a checkpoint's way) vs
#    go-git's object storage, one unsynced loose object each;
#  - 300 lookups in the index of a 100,000-object pack, in place vs decoded by go-git;
#  - 500 small blobs as loose objects, synced and not, vs go-git's (unsynced);
#  - the index file of 20,000 entries encoded and decoded vs go-git's codec.
# Prints, for bench/run.sh, lines "ROW<TAB>name<TAB>ours_s<TAB>ref_s<TAB>-" (information:
# these explain a design, the goals are on the commands that use them).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}

# best BENCH SUB: the minimum seconds per op of sub-benchmark SUB of BENCH.
out=$(go test ./internal/gitrepo/ -run '^$' \
	-bench '^Benchmark(WriteSmallObjects|PackIndexLookups|WriteLooseObjects|EncodeIndex|DecodeIndex)$' \
	-benchtime 3x -count "$RUNS")
best() {
	echo "$out" | awk -v name="$1/$2" '$1 ~ "^"name"(-[0-9]+)?$" { v = $3 / 1e9; if (min == "" || v < min) min = v } END { if (min == "") exit 1; printf "%.4f", min }'
}
row() { printf 'ROW\t%s\t%s\t%s\t-\n' "$1" "$(best "$2" "$3")" "$(best "$2" "$4")"; }

echo "== replay's git plumbing vs go-git (min of RUNS=$RUNS) $(date -u +%FT%TZ)"
row "2000 small objects: pack vs go-git loose" BenchmarkWriteSmallObjects ours-pack go-git-loose
row "300 lookups, 100k-object pack index" BenchmarkPackIndexLookups ours-in-place go-git-decode
row "500 loose objects, synced vs go-git" BenchmarkWriteLooseObjects ours go-git
row "500 loose objects, unsynced vs go-git" BenchmarkWriteLooseObjects ours-unsynced go-git
row "index of 20000 entries: encode" BenchmarkEncodeIndex ours go-git
row "index of 20000 entries: decode" BenchmarkDecodeIndex ours go-git
