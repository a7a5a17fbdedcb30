#!/bin/sh
# The build run of parallel-waves whose durable scratch copy of the dispatch
# directory was taken mid-run, after seq 3 completed: the copy holds files 1-3
# and the manifest's first six lines; the live directory in $TMPDIR moved on to
# seq 9 (in flight). The marker names the live directory; replay finds the
# durable copy first.
TZ=UTC
OFF=+00:00
export TZ
. "$(dirname "$0")/../lib.sh"
build_two_waves
DUR="$SCRATCH/crucible-dispatch-$SID"
mkdir -p "$DUR"
cp "$DD"/1-* "$DD"/2-* "$DD"/3-* "$DUR"/
head -n 6 "$DD/manifest.jsonl" >"$DUR/manifest.jsonl"
