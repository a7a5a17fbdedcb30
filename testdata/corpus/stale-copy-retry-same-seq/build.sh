#!/bin/sh
# A build run whose plan-writer (seq 3) timed out and was retried on the same
# seq: the orchestrator rewrote 3-plan-writer.md (a new header timestamp) and
# appended a second "dispatched" line. The durable copy in the scratch dir was
# taken between the two attempts: it holds the first attempt's dispatch file.
# The retry committed the plan and completed; pre-plan-gate was taken; the plan
# reviewer (seq 4) crashed in flight.
TZ=UTC
OFF=+00:00
export TZ
. "$(dirname "$0")/../lib.sh"
project_init feat/billing
session 1775620000
marker build 2 feat/billing "2026-04-07 09:00:00"
dispatch_active 4
shadow_init

dispatch 1 innovate innovate 1 - "2026-04-07 09:01:00" build "Design: billing."
output 1 innovate "Ledger-backed billing."
done_ 1 completed 180 "Design proposed"
dispatch 2 acceptance-test-writer acceptance-test-writer 1 - "2026-04-07 09:05:00" build "Write RED acceptance tests."
commit_at "2026-04-07 09:08:00" "test: acceptance tests (RED)" tests/acceptance_test.go
done_ 2 completed 200 "Acceptance tests written"
checkpoint pre-design-gate "2026-04-07 09:12:00" build
dispatch 3 plan-writer plan-writer 2 - "2026-04-07 09:13:00" build "Write the implementation plan."
done_ 3 error 240 "agent timed out"

DUR="$SCRATCH/crucible-dispatch-$SID"
mkdir -p "$DUR"
cp "$DD"/1-* "$DD"/2-* "$DD"/3-* "$DD/manifest.jsonl" "$DUR"/

dispatch 3 plan-writer plan-writer 2 - "2026-04-07 09:20:00" build "Write the implementation plan."
commit_at "2026-04-07 09:28:00" "docs: implementation plan" docs/plan.md
done_ 3 completed 500 "Plan with 3 tasks in 2 waves"
checkpoint pre-plan-gate "2026-04-07 09:29:30" build
dispatch 4 plan-reviewer plan-reviewer 2 - "2026-04-07 09:30:00" build "Review the plan."
