#!/bin/sh
# A debugging run's two Phase 1 investigators dispatched together (error analysis
# seq 1, change analysis seq 2, both task-less); seq 1 failed after 30 s and was
# retried as seq 3 (same context) once it had ended. The synthesis (seq 4)
# crashed in flight before any checkpoint. Seq 2 is a sibling, not a retry: the
# items to redo are error analysis (1, retried by 3), change analysis (2) and the
# synthesis (4).
TZ=UTC
OFF=+00:00
export TZ
. "$(dirname "$0")/../lib.sh"
project_init fix/refund-currency
session 1775630000
marker debugging 1 fix/refund-currency "2026-04-07 10:00:00"
dispatch_active 4
shadow_init

dispatch 1 investigator investigator 1 - "2026-04-07 10:01:00" debugging "Error analysis: refunds of EUR charges fail with a currency mismatch."
dispatch 2 investigator investigator 1 - "2026-04-07 10:01:00" debugging "Change analysis: what changed in billing/refund.go last week."
done_ 1 failed 30 "agent could not read the stack trace"
dispatch 3 investigator investigator 1 - "2026-04-07 10:01:40" debugging "Error analysis: refunds of EUR charges fail with a currency mismatch."
done_ 2 completed 400 "Currency default moved out of NewRefund"
done_ 3 completed 380 "Empty currency compared in Refund.Validate"
dispatch 4 synthesis synthesis synthesis - "2026-04-07 10:09:00" debugging "Consolidate the investigation reports."
