#!/bin/sh
# The build pipeline of parallel-waves, but the user reaches the project through a
# symlink ($ROOT/work/billing -> $ROOT/project). Crucible hashes the real path for
# <H>, so the scratch and shadow dirs are under the real path's hash.
TZ=UTC
OFF=+00:00
export TZ
. "$(dirname "$0")/../lib.sh"
build_two_waves
mkdir -p "$ROOT/work"
ln -s "$PROJECT" "$ROOT/work/billing"
