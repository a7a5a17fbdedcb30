#!/bin/sh
# The parallel-waves build pipeline with checkpoint-manifest.md gone from the
# shadow dir: the shadow repository's commit subjects are the only record.
TZ=UTC
OFF=+00:00
export TZ
. "$(dirname "$0")/../lib.sh"
build_two_waves
rm "$SHADOW/checkpoint-manifest.md"
