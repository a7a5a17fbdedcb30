#!/bin/sh
# A siege run (skills/siege/SKILL.md): siege keeps its own active-run marker, not
# .pipeline-active, so only the dispatch headers (**Pipeline:** siege) name the
# skill. Phase 1 scoping, Phase 2 attacker agents, Phase 4 security gate: a
# pre-siege-fix-round-N checkpoint before each fix agent. Crashed with round 2's
# fix agent in flight.
TZ=UTC
OFF=+00:00
export TZ
. "$(dirname "$0")/../lib.sh"
project_init feat/billing
session 1775570400
shadow_init

dispatch 1 explorer explorer 1 - "2026-04-07 12:01:00" siege "Find the security-relevant files of billing/."
output 1 explorer "Manifest: 9 files."
done_ 1 completed 120 "9 security-relevant files"
dispatch 2 siege-boundary-attacker boundary-attacker 2 - "2026-04-07 12:05:00" siege "External attacker perspective."
dispatch 3 siege-fresh-attacker fresh-attacker 2 - "2026-04-07 12:05:00" siege "Zero-context attacker."
dispatch 4 siege-chain-analyst chain-analyst 2 - "2026-04-07 12:05:00" siege "Chain analysis."
output 3 siege-fresh-attacker "SIEGE-FA-1 High: refund id guessable."
done_ 3 completed 600 "1 High"
output 2 siege-boundary-attacker "SIEGE-BA-1 Critical: SQL injection in charge lookup."
done_ 2 completed 720 "1 Critical"
output 4 siege-chain-analyst "No chains."
done_ 4 completed 540 "No chains"
checkpoint pre-siege-fix-round-1 "2026-04-07 12:30:00" siege

dispatch 5 fix fix 4 - "2026-04-07 12:31:00" siege "Fix SIEGE-BA-1 and SIEGE-FA-1."
commit_at "2026-04-07 12:38:00" "fix(security): address [SIEGE-BA-1] — SQL injection in charge lookup" billing/lookup.go
commit_at "2026-04-07 12:40:00" "fix(security): address [SIEGE-FA-1] — unguessable refund ids" billing/refund.go
done_ 5 completed 540 "2 findings fixed"
dispatch 6 siege-boundary-attacker boundary-attacker 4 - "2026-04-07 12:42:00" siege "Round 2 review."
dispatch 7 siege-chain-analyst chain-analyst 4 - "2026-04-07 12:42:00" siege "Round 2 rotating reviewer."
output 6 siege-boundary-attacker "SIEGE-BA-2 High: missing rate limit on refunds."
done_ 6 completed 400 "1 High"
output 7 siege-chain-analyst "No chains."
done_ 7 completed 380 "No chains"
checkpoint pre-siege-fix-round-2 "2026-04-07 12:55:00" siege

dispatch 8 fix fix 4 - "2026-04-07 12:56:00" siege "Fix SIEGE-BA-2."
