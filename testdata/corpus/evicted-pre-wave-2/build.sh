#!/bin/sh
# A build pipeline whose pre-wave-2 checkpoint is gone (evicted, or never taken):
# the shadow repo and checkpoint-manifest.md hold pre-design-gate, pre-plan-gate
# and pre-wave-1 only.
TZ=UTC
OFF=+00:00
export TZ
. "$(dirname "$0")/../lib.sh"
NO_WAVE2_CHECKPOINT=1
build_two_waves
