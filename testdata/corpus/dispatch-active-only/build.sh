#!/bin/sh
# A build pipeline that crashed before (or without) writing .pipeline-active: the
# scratch dir holds only the .dispatch-active-<sid> compaction marker naming the
# live dispatch dir. The dispatch headers name the skill.
TZ=UTC
OFF=+00:00
export TZ
. "$(dirname "$0")/../lib.sh"
build_two_waves
rm "$SCRATCH/.pipeline-active"
