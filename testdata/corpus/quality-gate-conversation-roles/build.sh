#!/bin/sh
# A quality-gate run whose checkers answer in the conversation, as upstream's
# prompts ask (fix-verifier, persistence-checker): no receipt, no output file.
# Rounds round/1..round/3; round 3's fix agent (seq 9) crashed in flight.
TZ=UTC
OFF=+00:00
export TZ
. "$(dirname "$0")/../lib.sh"
project_init feat/export
session 1775600000
shadow_init
marker quality-gate round/3 feat/export "2026-04-07 13:00:00"
dispatch_active 9

s=1
for r in 1 2 3; do
	m=$((r * 15))
	dispatch $s red-team red-team "round/$r" - "2026-04-07 13:$m:00" quality-gate "Red-team round $r of the export code."
	output $s red-team "Round $r findings."
	done_ $s completed 240 "Round $r: findings"
	checkpoint "pre-qg-fix-round-$r" "2026-04-07 13:$((m + 5)):00" quality-gate
	f=$((s + 1))
	dispatch $f fix fix "round/$r" - "2026-04-07 13:$((m + 6)):00" quality-gate "Fix round $r's findings in the export code."
	if [ "$r" -lt 3 ]; then
		commit_at "2026-04-07 13:$((m + 8)):00" "fix: export round $r findings" export/export.go
		done_ $f completed 150 "Round $r fixed"
		v=$((f + 1))
		dispatch $v fix-verifier fix-verifier "round/$r" - "2026-04-07 13:$((m + 9)):00" quality-gate "Check that each finding of round $r is resolved. Answer with a verdict per finding."
		done_ $v completed 60 "All round $r findings resolved"
		if [ "$r" = 2 ]; then
			# persistence-checker takes v+1; the next round's red-team v+2
			p=$((v + 1))
			dispatch $p persistence-checker persistence-checker "round/$r" - "2026-04-07 13:$((m + 10)):00" quality-gate "Did any finding persist across rounds? Answer yes or no per finding."
			done_ $p completed 45 "No persistent findings"
			v=$p
		fi
		s=$((v + 1))
	fi
done
