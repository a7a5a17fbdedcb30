#!/bin/sh
# The build run of parallel-waves after a first resume: the restore moved the
# branch back to pre-wave-2 (the partial commit of seq 9 undone), and the agent
# re-dispatched seq 9 as seq 10 (replay_of 9), which said "completed" but committed
# nothing. Seq 10 is the same work as seq 9: one work item, still not done.
TZ=UTC
OFF=+00:00
export TZ
. "$(dirname "$0")/../lib.sh"
build_two_waves
git -C "$PROJECT" reset -q --hard HEAD~1
replayed 10 build-implementer build-implementer 3 3 "2026-04-07 10:30:00" 9 1775552000 "Task 3: Implement the invoice export (CSV of settled charges and refunds)."
replayed_done 10 build-implementer build-implementer 3 3 9 1775552000 completed 60 "done"
