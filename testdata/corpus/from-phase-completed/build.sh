#!/bin/sh
# The build run of parallel-waves where wave 2's implementer finished too: every
# dispatch completed and verifies. The user asks to redo phase 3 (--from-phase 3).
TZ=UTC
OFF=+00:00
export TZ
. "$(dirname "$0")/../lib.sh"
MSG_T3="feat: task 3 invoice export"
build_two_waves
done_ 9 completed 480 "Task 3 done, 4 tests"
