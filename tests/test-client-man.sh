#!/bin/sh
# SPDX-License-Identifier: MIT
# The man pages of timeconv(1) and libtimeconv(3) format without a groff warning.
# Usage: test-client-man.sh PAGE...
set -u
# .ci/run installs groff: without it this is a failure, never a skip.
if ! command -v groff > /dev/null; then
        echo "Bail out! groff is not installed (Debian package groff-base, which .ci/run installs)"
        exit 1
fi
n=0
failed=0
for page in "$@"; do
        n=$((n + 1))
        out=$(LC_ALL=C.UTF-8 groff -man -ww -z "$page" 2>&1)
        if [ -z "$out" ]; then
                echo "ok $n - $(basename "$page") formats without warnings"
        else
                echo "not ok $n - $(basename "$page") formats without warnings"
                printf '%s\n' "$out" | sed 's/^/# /'
                failed=1
        fi
done
echo "1..$n"
exit $failed
