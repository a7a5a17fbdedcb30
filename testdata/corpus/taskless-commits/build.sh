#!/bin/sh
# A build pipeline whose implementers commit the way Crucible's implementer prompt
# tells them to: a conventional-commit subject with no task number. The words of
# each commit match the task's description in the dispatch body.
TZ=UTC
OFF=+00:00
export TZ
. "$(dirname "$0")/../lib.sh"
MSG_T1="feat: implement charge model"
MSG_T2="feat: implement refund flow"
MSG_T3="wip: invoice export"
build_two_waves
