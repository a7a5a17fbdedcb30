#!/bin/sh
# A debugging run as upstream's skill records it: three Phase 1 investigators,
# then the Synthesis step between phase 1 and phase 2, recorded with phase
# "synthesis" (a phase the profile does not number), the hypothesis red-team
# (3.5), the Phase 4 implementer's commit, pre-where-else, and the Phase 4.5
# sibling scan (seq 7) in flight.
TZ=UTC
OFF=+00:00
export TZ
. "$(dirname "$0")/../lib.sh"
project_init fix/refund-rounding
session 1775580000
marker debugging 4.5 fix/refund-rounding "2026-04-07 10:00:00"
dispatch_active 7
shadow_init

dispatch 1 investigator investigator 1 - "2026-04-07 10:01:00" debugging "Error analysis: refunds are off by one cent."
dispatch 2 investigator investigator 1 - "2026-04-07 10:01:00" debugging "Change analysis: rounding changes last week."
dispatch 3 investigator investigator 1 - "2026-04-07 10:01:00" debugging "Evidence gathering: failing refund amounts."
done_ 2 completed 400 "Rounding mode changed in money.go"
done_ 1 completed 420 "Off-by-one cent in partial refunds"
done_ 3 completed 430 "Only partial refunds affected"
dispatch 4 synthesis synthesis synthesis - "2026-04-07 10:09:00" debugging "Consolidate the three investigation reports."
done_ 4 completed 180 "Root cause: banker's rounding on partial refunds"
dispatch 5 red-team red-team 3.5 - "2026-04-07 10:14:00" quality-gate "Red-team the hypothesis."
output 5 red-team "Hypothesis holds."
done_ 5 completed 150 "Hypothesis holds"
checkpoint pre-debug-fix-cycle-1 "2026-04-07 10:18:00" debugging
dispatch 6 implementer implementer 4 - "2026-04-07 10:19:00" debugging "Fix: round half up on partial refunds. TDD."
commit_at "2026-04-07 10:27:00" "fix: round half up on partial refunds" billing/money.go
done_ 6 completed 520 "Fix verified"
checkpoint pre-where-else "2026-04-07 10:29:00" debugging
dispatch 7 where-else where-else 4.5 - "2026-04-07 10:30:00" debugging "Find and fix other rounding call sites."
