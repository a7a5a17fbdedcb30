#!/bin/sh
# The parallel-waves build pipeline with checkpoint-manifest.md cut short by a
# crash mid-write: two whole rows, then half a row, no newline.
TZ=UTC
OFF=+00:00
export TZ
. "$(dirname "$0")/../lib.sh"
build_two_waves
head -n 2 "$SHADOW/checkpoint-manifest.md" >"$SHADOW/table.tmp"
printf '| %s | 2026-04-07 09:2' "$(GIT_DIR="$SHADOW" git rev-parse --short=8 HEAD~1)" >>"$SHADOW/table.tmp"
mv "$SHADOW/table.tmp" "$SHADOW/checkpoint-manifest.md"
