#!/bin/sh
# bench/mutants.sh: the mutation harness of the end-to-end crash simulator
# (issue 36). Each mutant is one small, plausible bug planted in a scratch copy
# of the checkout (never in the tree): in the decision, the restore, the
# re-dispatch or the bookkeeping. For each, the e2e property test
# TestSimCrashEquivalence runs up to SEEDS seeds (500 by default) on the
# mutated product, in process (internal/testkit/pipesim/inproc: the mutated code is
# what the test binary links), and stops at the first seed whose end state
# breaks crash-equivalence outside the pending classes and seeds. A mutant no
# seed catches is a hole in the proof. Prints the score table.
#
#   sh bench/mutants.sh              # every mutant
#   ONLY="verify-commit-skip seq-reused" sh bench/mutants.sh
#   SEEDS=200 sh bench/mutants.sh
#   BIN_SEEDS=16 sh bench/mutants.sh # a survivor then also runs the first
#                                    # 16 seeds through the mutated binary
set -eu
cd "$(dirname "$0")/.."
SEEDS=${SEEDS:-500}
BIN_SEEDS=${BIN_SEEDS:-0}
ONLY=${ONLY:-}
scratch=$(mktemp -d "${TMPDIR:-/tmp}/replay-mutants-XXXXXX")
trap 'rm -rf "$scratch"' EXIT

# name|file|old text|new text (\n and \& escapes allowed, no |); the old text
# must occur exactly once in the file.
mutants='verify-commit-skip|resume/verify.go|out = v.guessed(d, v.commitCheck(d))|out = Verdict{OK: true, Check: "mutant"}
verify-output-skip|resume/verify.go|out = v.guessed(d, v.outputCheck(d))|out = Verdict{OK: true, Check: "mutant"}
restore-dropped|resume/run.go|rep, err := restore(pl, a, o, res.Session, keep)|rep, err := (*checkpoint.RestoreReport)(nil), error(nil)\n\t\t_ = keep
restore-keeps-extra-files|checkpoint/apply.go|		plan.remove = append(plan.remove, p)\n|		_ = p\n
restore-wrong-checkpoint|resume/boundary.go|if checkpoint.MatchReason(cps[i].Reason, r) \&\& (best == nil|if r != "" \&\& (best == nil
boundary-one-later|resume/analyze.go|			return k\n		}\n		a.Checks = append(a.Checks, Check{Boundary: b.Label(), Check: "everything before it complete", Detail|			return min(k+1, len(a.Boundaries)-1)\n		}\n		a.Checks = append(a.Checks, Check{Boundary: b.Label(), Check: "everything before it complete", Detail
in-flight-counted-done|resume/analyze.go|	if d.Done() {\n		return true\n	}\n	return a.supersededBy(d) != nil|	if !d.Failed() {\n		return true\n	}\n	return a.supersededBy(d) != nil
failed-always-superseded|resume/analyze.go|	}\n	return a.supersededBy(d) != nil |	}\n	if d.Failed() {\n		return true\n	}\n	return a.supersededBy(d) != nil 
file-without-line-done|resume/analyze.go|	if !d.Recorded {\n		return a.replayedDone(d) |	if !d.Recorded {\n		return true\n	}\n	if false {\n		return a.replayedDone(d) 
seq-reused|manifest/reserve.go|seq = max(seq, floor)|seq = max(seq, floor) - 1
replay-of-forgotten|redispatch/redispatch.go|	e.ReplayOf = \&of|	_ = of
redo-item-skipped|redispatch/redispatch.go|	if err := guardExternal(a, \&o); err != nil {|	if len(work) > 1 {\n		work = work[1:]\n	}\n	if err := guardExternal(a, \&o); err != nil {
redo-order-reversed|redispatch/redispatch.go|	if err := guardExternal(a, \&o); err != nil {|	for i, j := 0, len(work)-1; i < j; i, j = i+1, j-1 {\n		work[i], work[j] = work[j], work[i]\n	}\n	if err := guardExternal(a, \&o); err != nil {
torn-tail-dropped|manifest/torn.go|	if !endsWith(sidecar, piece) {|	if false \&\& !endsWith(sidecar, piece) {'

printf '%-28s %-8s %s\n' mutant result "caught at"
total=0 caught=0
printf '%s\n' "$mutants" | while IFS='|' read -r name file old new; do
	case " $ONLY " in
	"  ") ;;
	*" $name "*) ;;
	*) continue ;;
	esac
	rm -rf "$scratch/src" && mkdir -p "$scratch/src"
	git ls-files -z | xargs -0 cp --parents -t "$scratch/src"
	if ! python3 - "$scratch/src/$file" "$old" "$new" <<'PY'
import sys
path, old, new = sys.argv[1], sys.argv[2], sys.argv[3]
dec = lambda s: s.replace('\\n', '\n').replace('\\t', '\t').replace('\\&', '&').replace('\\|', '|')
old, new = dec(old), dec(new)
src = open(path).read()
if src.count(old) != 1:
    sys.exit("%s: the mutant's text occurs %d times" % (path, src.count(old)))
open(path, 'w').write(src.replace(old, new))
PY
	then
		printf '%-28s %-8s %s\n' "$name" STALE "(the code it mutates changed)"
		continue
	fi
	if ! (cd "$scratch/src" && go build ./... 2>"$scratch/build.log"); then
		printf '%-28s %-8s %s\n' "$name" NOBUILD "$(head -1 "$scratch/build.log")"
		continue
	fi
	out=$(cd "$scratch/src" && REPLAY_XSIM_SEEDS=$SEEDS REPLAY_XSIM_BIN_SEEDS=$BIN_SEEDS REPLAY_XSIM_FAILFAST=1 go test ./e2e -count=1 -timeout 60m -run 'TestSimCrashEquivalence$' -v 2>&1 || true)
	seed=$(echo "$out" | sed -n 's/.*CAUGHT at seed \([0-9]*\).*/\1/p' | head -1)
	if [ -z "$seed" ] && ! echo "$out" | grep -q 'seeds end to end in'; then
		# the test did not run to its end (a timeout, a build failure): no score
		printf '%-28s %-8s %s\n' "$name" NORUN "$(echo "$out" | grep -E 'panic|FAIL|cannot|error' | head -1)"
		continue
	fi
	if [ -n "$seed" ]; then
		class=$(echo "$out" | grep -E '^ +[a-z_-]+/[a-z0-9_-]+ +[0-9]+ +FAIL' | head -1 | awk '{print $1}')
		printf '%-28s %-8s seed %s (%s)\n' "$name" caught "$seed" "$class"
	else
		printf '%-28s %-8s %s\n' "$name" SURVIVED "no finding in $SEEDS seeds"
	fi
done
