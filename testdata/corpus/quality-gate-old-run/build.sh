#!/bin/sh
# A standalone quality-gate run (skill quality-gate, one manifest phase per round:
# round/1 .. round/5; a pre-qg-fix-round-N checkpoint before each fix agent) in a
# project whose shadow repository also holds the checkpoints of a week-old build
# run on another branch, its own pre-qg-fix-round-1..4 among them. Round 5's fix
# agent (seq 10) crashed in flight.
TZ=UTC
OFF=+00:00
export TZ
. "$(dirname "$0")/../lib.sh"
project_init feat/ledger
session 1775590000
shadow_init
old_run feat/old-login 2026-03-31 build pre-design-gate pre-plan-gate pre-wave-1 pre-wave-2 pre-qg-fix-round-1 pre-qg-fix-round-2 pre-qg-fix-round-3 pre-qg-fix-round-4
marker quality-gate round/5 feat/ledger "2026-04-07 13:00:00"
dispatch_active 10

s=1
for r in 1 2 3 4 5; do
	m=$((r * 10))
	dispatch $s red-team red-team "round/$r" - "2026-04-07 13:$m:00" quality-gate "Red-team round $r of the ledger code."
	output $s red-team "Round $r findings."
	done_ $s completed 240 "Round $r: findings"
	checkpoint "pre-qg-fix-round-$r" "2026-04-07 13:$((m + 5)):00" quality-gate
	f=$((s + 1))
	dispatch $f fix fix "round/$r" - "2026-04-07 13:$((m + 6)):00" quality-gate "Fix round $r's findings in the ledger code."
	if [ "$r" -lt 5 ]; then
		commit_at "2026-04-07 13:$((m + 8)):00" "fix: ledger round $r findings" ledger/ledger.go
		done_ $f completed 150 "Round $r fixed"
	fi
	s=$((f + 1))
done
