#!/bin/sh
# The same build pipeline on a machine two hours east of UTC: checkpoint subjects
# and checkpoint-manifest.md rows carry the orchestrator's local wall clock with no
# zone; shadow commits, project commits and dispatch headers carry +02:00.
TZ=EET-2
OFF=+02:00
export TZ
. "$(dirname "$0")/../lib.sh"
build_two_waves
