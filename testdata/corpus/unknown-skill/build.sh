#!/bin/sh
# A pipeline of a skill replay has no profile for ("ledger-audit"), written with the
# same conventions: marker, dispatch files, manifest, shadow checkpoints whose
# reasons are the skill's own. Roles: scout, oracle, ledger-fixer, tally-gate.
TZ=UTC
OFF=+00:00
export TZ
. "$(dirname "$0")/../lib.sh"
project_init chore/ledger-audit
session 1775566800
marker ledger-audit 2 chore/ledger-audit "2026-04-07 11:00:00"
dispatch_active 5
shadow_init

dispatch 1 scout scout 1 - "2026-04-07 11:01:00" ledger-audit "Survey the ledger tables."
output 1 scout "12 tables, 3 with drift."
done_ 1 completed 240 "12 tables surveyed, 3 drifting"
dispatch 2 oracle oracle 1 - "2026-04-07 11:05:00" ledger-audit "Predict which drift is harmful."
output 2 oracle "Drift in refunds is harmful."
done_ 2 completed 180 "Refund drift is harmful"
checkpoint pre-ledger-fix "2026-04-07 11:10:00" ledger-audit

dispatch 3 ledger-fixer ledger-fixer 2 - "2026-04-07 11:11:00" ledger-audit "Fix the refund drift."
commit_at "2026-04-07 11:20:00" "fix: reconcile refund ledger" ledger/refunds.sql
done_ 3 completed 540 "Refund ledger reconciled"
dispatch 4 tally-gate tally-gate 2 - "2026-04-07 11:21:00" ledger-audit "Gate round 1."
done_ 4 completed 60 "Round 1: 1 significant finding"
checkpoint pre-ledger-round-2 "2026-04-07 11:25:00" ledger-audit

dispatch 5 ledger-fixer ledger-fixer 2 - "2026-04-07 11:26:00" ledger-audit "Fix round 2's finding."
