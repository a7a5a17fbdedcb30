#!/bin/sh
# A build run with six-wide waves, in a project whose shadow repository also holds
# a week-old run's checkpoints on another branch (its own pre-design-gate,
# pre-plan-gate, pre-wave-1, pre-wave-2, pre-wave-3). Wave 1 (seqs 5-10, tasks
# 1-6): seq 7 failed and was retried as seq 11. Wave 2 (seqs 12-17, tasks 7-12):
# 12-14 completed; seq 15 committed its work and died before its completion line;
# seq 16 is in flight after a partial commit; seq 17 failed and its retry, seq 18,
# is in flight.
TZ=UTC
OFF=+00:00
export TZ
. "$(dirname "$0")/../lib.sh"
project_init feat/billing
session 1775610000
shadow_init
old_run feat/old-billing 2026-03-31 build pre-design-gate pre-plan-gate pre-wave-1 pre-wave-2 pre-wave-3
marker build 3 feat/billing "2026-04-07 09:00:00"
dispatch_active 18

dispatch 1 innovate innovate 1 - "2026-04-07 09:01:00" build "Design: billing."
output 1 innovate "Ledger-backed billing."
done_ 1 completed 180 "Design proposed"
dispatch 2 acceptance-test-writer acceptance-test-writer 1 - "2026-04-07 09:05:00" build "Write RED acceptance tests."
commit_at "2026-04-07 09:08:00" "test: acceptance tests (RED)" tests/acceptance_test.go
done_ 2 completed 200 "Acceptance tests written"
commit_at "2026-04-07 09:10:00" "docs: design doc" docs/design.md
checkpoint pre-design-gate "2026-04-07 09:12:00" build
dispatch 3 plan-writer plan-writer 2 - "2026-04-07 09:13:00" build "Write the implementation plan."
commit_at "2026-04-07 09:17:00" "docs: implementation plan" docs/plan.md
done_ 3 completed 260 "Plan with 12 tasks in 2 waves"
dispatch 4 plan-reviewer plan-reviewer 2 - "2026-04-07 09:18:00" build "Review the plan."
output 4 plan-reviewer "Plan approved."
done_ 4 completed 120 "Plan approved"
checkpoint pre-plan-gate "2026-04-07 09:21:00" build
checkpoint pre-wave-1 "2026-04-07 09:22:00" build

# wave 1: tasks 1-6 at 09:23, commits 09:30-09:35; seq 7 (task 3) fails, seq 11 retries it
for t in 1 2 3 4 5 6; do
	dispatch $((t + 4)) build-implementer build-implementer 3 $t "2026-04-07 09:23:00" build "Task $t of wave 1."
done
for t in 1 2 4 5 6; do
	commit_at "2026-04-07 09:3$((t - 1)):00" "feat: task $t of wave 1" "billing/t$t.go"
	done_ $((t + 4)) completed $((420 + t * 60)) "Task $t done"
done
done_ 7 failed 300 "Task 3: tests would not compile"
dispatch 11 build-implementer build-implementer 3 3 "2026-04-07 09:36:00" build "Task 3 of wave 1 (retry)."
commit_at "2026-04-07 09:42:00" "feat: task 3 of wave 1" billing/t3.go
done_ 11 completed 420 "Task 3 done"
checkpoint pre-wave-2 "2026-04-07 09:45:00" build

# wave 2: tasks 7-12 at 09:46 (seqs 12-17)
for t in 7 8 9 10 11 12; do
	dispatch $((t + 5)) build-implementer build-implementer 3 $t "2026-04-07 09:46:00" build "Task $t of wave 2."
done
for t in 7 8 9; do
	commit_at "2026-04-07 09:5$((t - 7)):00" "feat: task $t of wave 2" "billing/t$t.go"
	done_ $((t + 5)) completed $((400 + t * 60)) "Task $t done"
done
commit_at "2026-04-07 09:54:00" "feat: task 10 of wave 2" billing/t10.go
commit_at "2026-04-07 09:55:00" "wip: task 11 of wave 2" billing/t11.go
done_ 17 failed 500 "Task 12: build broke"
dispatch 18 build-implementer build-implementer 3 12 "2026-04-07 09:56:00" build "Task 12 of wave 2 (retry)."
