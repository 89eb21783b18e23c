#!/bin/sh
# SPDX-License-Identifier: MIT
# The man pages of timeconv(1) and libtimeconv(3) format without a groff warning, and
# libtimeconv(3) gives what a program needs of the public header (HEADER) to handle events: the
# handler's signature and every field of struct timeconv_event, in the SYNOPSIS and described.
# Usage: test-client-man.sh HEADER PAGE...
set -u
header=$1
shift
# .ci/run installs groff: without it this is a failure, never a skip.
if ! command -v groff > /dev/null; then
        echo "Bail out! groff is not installed (Debian package groff-base, which .ci/run installs)"
        exit 1
fi
n=0
failed=0
check() {       # check STATUS DESCRIPTION
        n=$((n + 1))
        if [ "$1" -eq 0 ]; then
                echo "ok $n - $2"
        else
                echo "not ok $n - $2"
                failed=1
        fi
}
for page in "$@"; do
        out=$(LC_ALL=C.UTF-8 groff -man -ww -z "$page" 2>&1)
        [ -z "$out" ]
        check $? "$(basename "$page") formats without warnings"
        [ -z "$out" ] || printf '%s\n' "$out" | sed 's/^/# /'
        case $page in */libtimeconv.3) lib=$page ;; esac
done

# The fields, as the header declares them: the last word before each ';' in the struct, comments
# left out.
fields=$(sed -n '/^struct timeconv_event {/,/^};/p' "$header" | sed -e 's|/\*.*||' -e '/^ *\*/d' |
        sed -n 's/.*[ *]\([a-z_]*\);.*/\1/p' | tr '\n' ' ')
[ -n "$fields" ] && [ -n "${lib:-}" ]
check $? "struct timeconv_event's fields read from $(basename "$header"): $fields"
synopsis=$(sed -n '/^\.SH SYNOPSIS/,/^\.SH DESCRIPTION/p' "${lib:-/dev/null}")
description=$(sed -n '/^\.SH DESCRIPTION/,$p' "${lib:-/dev/null}")
printf '%s\n' "$synopsis" | grep -q 'typedef void (\*timeconv_event_handler)(const struct timeconv_event \*" event ,' &&
        printf '%s\n' "$synopsis" | grep -A1 'timeconv_event_handler)' | grep -q 'void \*" userdata );'
check $? "libtimeconv(3)'s SYNOPSIS gives the handler's signature"
for f in $fields; do
        printf '%s\n' "$synopsis" | grep -q "^\.BI \"  *[a-z0-9_ *]*[ *]\" $f ;\$" &&
                printf '%s\n' "$description" | grep -q "^\.IR\{0,1\} .*\<$f\>"
        check $? "libtimeconv(3) declares struct timeconv_event's $f in its SYNOPSIS and describes it"
done
echo "1..$n"
exit $failed
