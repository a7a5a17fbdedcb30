# lib.sh: shell functions the corpus build scripts share. Each writes files the
# way Crucible's conventions write them (skills/shared/dispatch-convention.md,
# skills/checkpoint/SKILL.md, scripts/dispatch.py): dispatch files with the 4-line
# audit header, manifest lines through `replay manifest before/after` (the drop-in
# for dispatch.py), a shadow checkpoint repository driven by the git binary with
# GIT_DIR/GIT_WORK_TREE, rows-only checkpoint-manifest.md inside the shadow dir.
#
# A case script sets TZ and OFF (the machine's UTC offset, "+02:00"), sources this
# file with the output root as $1, and calls the functions below. Every time is
# given as the orchestrator's local wall clock ("2026-04-07 09:15:00"); the zoned
# form is derived from it with OFF. POSIX sh, git and sha256sum (or shasum).

set -eu

ROOT=${1:?usage: build.sh OUTPUT_ROOT}
ROOT=$(cd "$ROOT" && pwd -P)
export HOME="$ROOT/home"
export TMPDIR="$ROOT/tmp"
mkdir -p "$HOME" "$TMPDIR"
REPLAY=${REPLAY:-replay}
OFF=${OFF:-+00:00}
PROJECT="$ROOT/project"

export GIT_CONFIG_NOSYSTEM=1
export GIT_AUTHOR_NAME="Crucible Orchestrator" GIT_AUTHOR_EMAIL="orchestrator@example.invalid"
export GIT_COMMITTER_NAME="Crucible Orchestrator" GIT_COMMITTER_EMAIL="orchestrator@example.invalid"

# hash16 PATH: the first 16 hex characters of sha256 of PATH (Crucible's <H>).
hash16() {
	if command -v sha256sum >/dev/null 2>&1; then
		printf %s "$1" | sha256sum | cut -c1-16
	else
		printf %s "$1" | shasum -a 256 | cut -c1-16
	fi
}

# zoned "YYYY-MM-DD HH:MM:SS": the local wall clock as ISO 8601 with the offset.
zoned() {
	printf '%sT%s%s' "${1% *}" "${1#* }" "$OFF"
}

# project_init BRANCH: a git project with one commit (the pipeline's baseline) at
# the first time of the run; sets H, SCRATCH, SHADOW and BASELINE.
project_init() {
	mkdir -p "$PROJECT"
	git init -q -b "$1" "$PROJECT"
	printf '# billing\n' >"$PROJECT/README.md"
	commit_at "2026-04-07 08:55:00" "chore: initial commit" README.md
	BASELINE=$(git -C "$PROJECT" rev-parse HEAD)
	H=$(hash16 "$(cd "$PROJECT" && pwd -P)")
	SCRATCH="$HOME/.claude/projects/$H/memory"
	SHADOW="$HOME/.claude/projects/$H/checkpoints/$H"
	mkdir -p "$SCRATCH"
}

# commit_at TIME MESSAGE FILE [CONTENT]: write FILE in the project (appending
# CONTENT, default the message) and commit it at TIME.
commit_at() {
	_t=$(zoned "$1")
	mkdir -p "$(dirname "$PROJECT/$3")"
	printf '%s\n' "${4:-$2}" >>"$PROJECT/$3"
	git -C "$PROJECT" add -- "$3"
	GIT_AUTHOR_DATE="$_t" GIT_COMMITTER_DATE="$_t" git -C "$PROJECT" commit -q -m "$2"
}

# session SID: the live dispatch directory of session SID in $TMPDIR; sets DD.
session() {
	SID=$1
	DD="$TMPDIR/crucible-dispatch-$SID"
	mkdir -p "$DD"
}

# marker SKILL PHASE BRANCH START: the 8-key .pipeline-active marker.
marker() {
	cat >"$SCRATCH/.pipeline-active" <<EOF
{"pipeline_id": "$SID", "skill": "$1", "phase": "$2", "start_time": "$(zoned "$4")", "scratch_dir": "$SCRATCH", "dispatch_dir": "$DD/", "branch": "$3", "baseline_sha": "$BASELINE"}
EOF
}

# dispatch_active SEQ: the two-line .dispatch-active-<sid> compaction marker.
dispatch_active() {
	printf 'dispatch-dir: %s/\nseq: %s\n' "$DD" "$1" >"$SCRATCH/.dispatch-active-$SID"
}

# dispatch SEQ TEMPLATE ROLE PHASE TASK TIME SKILL CONTEXT: write the dispatch file
# (4-line header, ---, template text, ## Context) and record it with
# `replay manifest before`. TASK "-" means no task.
dispatch() {
	_f="$1-$2.md"
	_task=$5
	[ "$_task" = "-" ] && _task="null"
	{
		printf '# Dispatch: %s\n' "$2"
		printf '**Pipeline:** %s | **Phase:** %s | **Task:** %s\n' "$7" "$4" "$_task"
		printf '**Timestamp:** %s\n' "$(zoned "$6")"
		printf '**Dispatch-Dir:** %s/\n\n---\n' "$DD"
		printf 'You are the %s. Follow the instructions below.\n\n## Context\n%s\n' "$3" "$8"
	} >"$DD/$_f"
	if [ "$5" = "-" ]; then
		"$REPLAY" manifest before --dir "$DD" --seq "$1" --file "$_f" --role "$3" --phase "$4" --model-tier opus >/dev/null
	else
		"$REPLAY" manifest before --dir "$DD" --seq "$1" --file "$_f" --role "$3" --phase "$4" --task "$5" --model-tier opus >/dev/null
	fi
}

# done_ SEQ STATUS DURATION SUMMARY: `replay manifest after` for SEQ.
done_() {
	"$REPLAY" manifest after --dir "$DD" --seq "$1" --status "$2" --duration "$3" --summary "$4" >/dev/null
}

# output SEQ TEMPLATE TEXT: an output file beside the dispatch file.
output() {
	printf '%s\n' "$3" >"$DD/$1-$2-output.md"
}

# receipt SEQ TEMPLATE PHASE VERDICT: a receipt-ledger.jsonl line.
receipt() {
	printf '{"dispatch_id":"%s-%s","phase":"%s","rcpt_sha256":"%064d","verdict":"%s"}\n' "$1" "$2" "$3" "$1" "$4" >>"$DD/receipt-ledger.jsonl"
}

# shadow_init: the shadow repository as the checkpoint skill creates it.
shadow_init() {
	mkdir -p "$SHADOW"
	GIT_DIR="$SHADOW" GIT_WORK_TREE="$PROJECT" git init -q
	GIT_DIR="$SHADOW" git config core.worktree "$(cd "$PROJECT" && pwd -P)"
	GIT_DIR="$SHADOW" git config gc.auto 0
	printf 'node_modules/\n.env\n.env.*\n__pycache__/\n.git/\nvenv/\n.venv/\ndist/\nbuild/\n.next/\n*.pyc\n.DS_Store\n' >"$SHADOW/.gitignore"
}

# checkpoint REASON TIME SOURCE: snapshot the project into the shadow repo at TIME
# with subject "<reason> | <local timestamp> | <source>" and append the row to
# checkpoint-manifest.md inside the shadow dir.
checkpoint() {
	_t=$(zoned "$2")
	GIT_DIR="$SHADOW" GIT_WORK_TREE="$PROJECT" git add -A
	GIT_DIR="$SHADOW" GIT_WORK_TREE="$PROJECT" GIT_AUTHOR_DATE="$_t" GIT_COMMITTER_DATE="$_t" \
		git commit -q --allow-empty -m "$1 | $2 | $3"
	_h=$(GIT_DIR="$SHADOW" git rev-parse --short=8 HEAD)
	printf '| %s | %s | %s | %s |\n' "$_h" "$2" "$1" "$3" >>"$SHADOW/checkpoint-manifest.md"
}

# build_two_waves: a build pipeline of session 1775545200 on branch feat/billing
# that crashed in phase 3 wave 2, with every time on the local wall clock of
# 2026-04-07. Knobs (environment): MSG_T1, MSG_T2, MSG_T3 (the implementers'
# commit messages), NO_WAVE2_CHECKPOINT=1 (pre-wave-2 never taken or evicted).
#
#   phase 1: 1 innovate, 2 acceptance-test-writer (commit)   -> pre-design-gate
#   phase 2: 3 plan-writer (commit), 4 plan-reviewer        -> pre-plan-gate, pre-wave-1
#   phase 3 wave 1: 5, 6 build-implementer t1, t2 dispatched together, finishing
#            out of order (5d 6d 6c 5c); 7, 8 build-reviewer t1, t2 -> pre-wave-2
#   phase 3 wave 2: 9 build-implementer t3 in flight, one partial commit; crash.
build_two_waves() {
	project_init feat/billing
	session 1775545200
	marker build 3 feat/billing "2026-04-07 09:00:00"
	dispatch_active 9
	shadow_init

	dispatch 1 innovate innovate 1 - "2026-04-07 09:01:00" build "Design: charge model and refunds."
	output 1 innovate "Proposed a ledger-backed charge model."
	done_ 1 completed 180 "Proposed a ledger-backed charge model"
	dispatch 2 acceptance-test-writer acceptance-test-writer 1 - "2026-04-07 09:05:00" build "Write RED acceptance tests for charges and refunds."
	commit_at "2026-04-07 09:09:00" "test: acceptance tests for charges and refunds (RED)" tests/acceptance_test.go
	done_ 2 completed 300 "4 acceptance tests written, all RED"
	checkpoint pre-design-gate "2026-04-07 09:12:00" build

	dispatch 3 plan-writer plan-writer 2 - "2026-04-07 09:13:00" build "Write the implementation plan."
	commit_at "2026-04-07 09:17:00" "docs: implementation plan for billing" docs/plan.md
	done_ 3 completed 260 "Plan with 3 tasks in 2 waves"
	dispatch 4 plan-reviewer plan-reviewer 2 - "2026-04-07 09:18:00" build "Review the plan."
	output 4 plan-reviewer "Plan approved."
	done_ 4 completed 120 "Plan approved"
	checkpoint pre-plan-gate "2026-04-07 09:21:00" build
	checkpoint pre-wave-1 "2026-04-07 09:22:00" build

	dispatch 5 build-implementer build-implementer 3 1 "2026-04-07 09:23:00" build "Task 1: Implement the charge model (Charge struct, amount validation, currency rounding)."
	dispatch 6 build-implementer build-implementer 3 2 "2026-04-07 09:23:00" build "Task 2: Implement the refund flow (partial refunds against a settled charge)."
	commit_at "2026-04-07 09:36:00" "${MSG_T2:-feat: task 2 refund flow}" billing/refund.go
	done_ 6 completed 780 "Task 2 done, 5 tests"
	commit_at "2026-04-07 09:41:00" "${MSG_T1:-feat: task 1 charge model}" billing/charge.go
	done_ 5 completed 1080 "Task 1 done, 6 tests"
	dispatch 7 build-reviewer build-reviewer 3 1 "2026-04-07 09:42:00" build "Review task 1."
	output 7 build-reviewer "PASS: no blocking findings."
	done_ 7 completed 200 "Task 1 PASS"
	dispatch 8 build-reviewer build-reviewer 3 2 "2026-04-07 09:42:00" build "Review task 2."
	receipt 8 build-reviewer 3 PASS
	done_ 8 completed 210 "Task 2 PASS"
	if [ "${NO_WAVE2_CHECKPOINT:-}" != 1 ]; then
		checkpoint pre-wave-2 "2026-04-07 09:47:00" build
	fi

	dispatch 9 build-implementer build-implementer 3 3 "2026-04-07 09:48:00" build "Task 3: Implement the invoice export (CSV of settled charges and refunds)."
	commit_at "2026-04-07 09:55:00" "${MSG_T3:-wip: task 3 invoice export}" billing/invoice.go
}

# replayed SEQ TEMPLATE ROLE PHASE TASK TIME OF RSID CONTEXT: a re-dispatch replay
# made earlier (a resume's agent loop): its dispatch file, and its "dispatched" line
# in the byte form replay appends (replay_of OF, replay_session RSID). TASK "-" is
# no task.
replayed() {
	_f="$1-$2.md"
	_task=$5
	[ "$_task" = "-" ] && _task="null"
	{
		printf '# Dispatch: %s\n' "$2"
		printf '**Pipeline:** build | **Phase:** %s | **Task:** %s\n' "$4" "$_task"
		printf '**Timestamp:** %s\n' "$(zoned "$6")"
		printf '**Dispatch-Dir:** %s/\n\n---\n' "$DD"
		printf 'You are the %s. Follow the instructions below.\n\n## Context\n%s\n' "$3" "$9"
	} >"$DD/$_f"
	printf '{"seq":%s,"file":"%s","role":"%s","phase":"%s","task":%s,"status":"dispatched","duration_s":null,"summary":null,"input_chars":100,"output_chars":null,"model_tier":"opus","tool_calls":null,"replay_of":%s,"replay_session":"%s"}\n' \
		"$1" "$_f" "$3" "$4" "$_task" "$7" "$8" >>"$DD/manifest.jsonl"
}

# replayed_done SEQ TEMPLATE ROLE PHASE TASK OF RSID STATUS DURATION SUMMARY: the
# completion line of a replayed dispatch.
replayed_done() {
	_task=$5
	[ "$_task" = "-" ] && _task="null"
	printf '{"seq":%s,"file":"%s-%s.md","role":"%s","phase":"%s","task":%s,"status":"%s","duration_s":%s,"summary":"%s","input_chars":100,"output_chars":10,"model_tier":"opus","tool_calls":null,"replay_of":%s,"replay_session":"%s"}\n' \
		"$1" "$1" "$2" "$3" "$4" "$_task" "$8" "$9" "${10}" "$6" "$7" >>"$DD/manifest.jsonl"
}

# old_run BRANCH DAY SOURCE REASON...: a run of a week before on another branch of
# the same project, whose checkpoints (REASON..., one a minute from DAY 10:00, source
# SOURCE) stay in the shadow repository: each snapshots that branch's tree, which
# holds none of today's files. The project is back on its branch afterwards.
old_run() {
	_branch=$1 _day=$2 _src=$3
	shift 3
	_cur=$(git -C "$PROJECT" symbolic-ref --short HEAD)
	git -C "$PROJECT" checkout -q -b "$_branch" "$BASELINE"
	_m=0
	for _r in "$@"; do
		_m=$((_m + 1))
		commit_at "$_day 10:0$_m:00" "feat: old work before $_r" "old/$_r.txt"
		checkpoint "$_r" "$_day 10:0$_m:30" "$_src"
	done
	git -C "$PROJECT" checkout -q "$_cur"
}
