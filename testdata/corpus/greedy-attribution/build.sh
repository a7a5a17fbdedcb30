#!/bin/sh
# Two implementers of one wave dispatched a second apart (tasks 1 and 2), whose
# commits name no task and share no word with the dispatch text: "implement charge
# model" at 15:05 and "implement refund endpoint" at 15:10. Task 2 (1200 s) records
# its completion before task 1 (480 s); task 1's window holds only the 15:05 commit,
# task 2's holds both. Only a one-to-one assignment (15:05 to task 1, 15:10 to
# task 2) verifies both. Wave 2 (tasks 3 and 4) crashed in flight.
TZ=UTC
OFF=+00:00
export TZ
. "$(dirname "$0")/../lib.sh"
project_init feat/payments
session 1775570000
marker build 3 feat/payments "2026-04-07 14:00:00"
dispatch_active 8
shadow_init

dispatch 1 innovate innovate 1 - "2026-04-07 14:01:00" build "Design the payments module."
output 1 innovate "A ledger-backed design."
done_ 1 completed 120 "Design proposed"
dispatch 2 acceptance-test-writer acceptance-test-writer 1 - "2026-04-07 14:04:00" build "Write RED acceptance tests for payments."
commit_at "2026-04-07 14:08:00" "test: payments acceptance tests (RED)" tests/payments_test.go
done_ 2 completed 260 "Acceptance tests written"
checkpoint pre-design-gate "2026-04-07 14:10:00" build
dispatch 3 plan-writer plan-writer 2 - "2026-04-07 14:11:00" build "Write the implementation plan."
commit_at "2026-04-07 14:15:00" "docs: payments plan" docs/plan.md
done_ 3 completed 250 "Plan with 4 tasks in 2 waves"
checkpoint pre-plan-gate "2026-04-07 14:17:00" build
checkpoint pre-wave-1 "2026-04-07 14:59:00" build

dispatch 4 build-implementer build-implementer 3 1 "2026-04-07 15:00:00" build "See the plan, first item."
dispatch 5 build-implementer build-implementer 3 2 "2026-04-07 15:00:01" build "See the plan, second item."
commit_at "2026-04-07 15:05:00" "feat: implement charge model" pay/charge.go
commit_at "2026-04-07 15:10:00" "feat: implement refund endpoint" pay/refund.go
done_ 5 completed 1200 "Done"
done_ 4 completed 480 "Done"
checkpoint pre-wave-2 "2026-04-07 15:21:00" build

dispatch 6 build-implementer build-implementer 3 3 "2026-04-07 15:22:00" build "See the plan, third item."
dispatch 7 build-implementer build-implementer 3 4 "2026-04-07 15:22:01" build "See the plan, fourth item."
