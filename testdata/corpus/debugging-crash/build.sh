#!/bin/sh
# A debugging pipeline (skills/debugging/SKILL.md) that crashed in Phase 4.5
# ("Where Else?"): two parallel Phase 1 investigators and the synthesis agent, the
# Phase 3.5 hypothesis red-team dispatched by quality-gate (its header names
# quality-gate), the Phase 4 implementer's WIP commit, then the sibling scan, in
# flight, after one sibling commit. Checkpoints as the checkpoint skill lists them
# for debugging: pre-debug-fix-cycle-1 before Phase 4, pre-where-else before 4.5.
TZ=UTC
OFF=+00:00
export TZ
. "$(dirname "$0")/../lib.sh"
project_init fix/refund-currency
session 1775559600
marker debugging 4.5 fix/refund-currency "2026-04-07 10:00:00"
dispatch_active 6
shadow_init

dispatch 1 investigator investigator 1 - "2026-04-07 10:01:00" debugging "Error analysis: refund of a EUR charge fails with 'currency mismatch'."
dispatch 2 investigator investigator 1 - "2026-04-07 10:01:00" debugging "Change analysis: what changed in billing/refund.go last week."
output 2 investigator "Commit 3f2a moved currency defaulting out of NewRefund."
done_ 2 completed 420 "Currency default moved out of NewRefund"
output 1 investigator "Stack trace points at Refund.Validate comparing an empty currency."
done_ 1 completed 480 "Empty currency compared in Refund.Validate"
dispatch 3 synthesis synthesis 1 - "2026-04-07 10:10:00" debugging "Consolidate the two investigation reports."
output 3 synthesis "Root cause: refunds no longer inherit the charge's currency."
done_ 3 completed 200 "Root cause: refund currency not inherited"
dispatch 4 red-team red-team 3.5 - "2026-04-07 10:15:00" quality-gate "Red-team the hypothesis."
output 4 red-team "Hypothesis holds; 1 minor finding."
done_ 4 completed 150 "Hypothesis holds"
checkpoint pre-debug-fix-cycle-1 "2026-04-07 10:20:00" debugging

dispatch 5 implementer implementer 4 - "2026-04-07 10:21:00" debugging "Hypothesis: NewRefund must copy the charge's currency. TDD: failing test first."
commit_at "2026-04-07 10:30:00" "fix(wip): refunds inherit the charge currency" billing/refund.go
done_ 5 completed 560 "Fix verified, reproduction test passes"
checkpoint pre-where-else "2026-04-07 10:32:00" debugging

dispatch 6 where-else where-else 4.5 - "2026-04-07 10:33:00" debugging "Find and fix siblings of the currency inheritance bug."
commit_at "2026-04-07 10:38:00" "fix(sibling): chargebacks inherit the charge currency" billing/chargeback.go
