#!/bin/sh
# The UTC+2 pipeline of utc-plus-2, received and planned on a machine in UTC: the
# zone-less checkpoint stamps, read in this machine's zone, are two hours off the
# shadow commits' own zoned times. The commit times win; the plan says so.
exec sh "$(dirname "$0")/../utc-plus-2/build.sh" "$@"
