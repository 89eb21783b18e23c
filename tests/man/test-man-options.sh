#!/bin/sh
# SPDX-License-Identifier: MIT
# Every option that timeconvd --help and timeconv --help (and each command's help) name is
# documented in timeconvd(8) and timeconv(1): the help texts come from the programs, so a new
# option that the pages miss fails here.
# Usage: test-man-options.sh TIMECONVD TIMECONV MAN_DIR
set -u
daemon=$1
cli=$2
mandir=$3
. "$(dirname "$0")/../tap.sh"

# The long options in a text, one per line.
options() {
        grep -oE '(^|[^a-z0-9-])--[a-z][a-z0-9-]*' | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u
}

# Whether page documents option (groff writes each - as \-).
documented() {
        grep -qF -- "$(printf '%s' "$2" | sed 's/-/\\-/g')" "$1"
}

check() {       # check PAGE DESCRIPTION (the help text on stdin)
        page=$1
        what=$2
        list=$(options)
        [ -n "$list" ]
        ok $? "$what names options"
        for o in $list; do
                documented "$page" "$o"
                ok $? "$(basename "$page") documents $o ($what)"
        done
}

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
"$daemon" --help > "$tmp/daemon"
{
        "$cli" --help
        for c in convert domains now monitor push export frames; do
                "$cli" "$c" --help
        done
} > "$tmp/cli"
check "$mandir/timeconvd.8" "timeconvd --help" < "$tmp/daemon"
check "$mandir/timeconv.1" "timeconv --help" < "$tmp/cli"

tap_done
