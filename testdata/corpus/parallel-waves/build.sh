#!/bin/sh
# A build pipeline on a UTC machine: wave 1's two implementers were dispatched
# together and finished out of order; wave 2's implementer crashed mid-task.
TZ=UTC
OFF=+00:00
export TZ
. "$(dirname "$0")/../lib.sh"
build_two_waves
