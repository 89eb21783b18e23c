# SPDX-License-Identifier: MIT
# TAP for the shell tests, sourced: ok STATUS DESCRIPTION counts and prints one test point;
# tap_done prints the plan and exits non-zero when any point failed.

n=0
failed=0

ok() {          # ok STATUS DESCRIPTION
        n=$((n + 1))
        if [ "$1" -eq 0 ]; then
                echo "ok $n - $2"
        else
                echo "not ok $n - $2"
                failed=$((failed + 1))
        fi
}

tap_done() {
        echo "1..$n"
        [ "$failed" -eq 0 ] && exit 0
        exit 1
}
