#!/bin/sh
# SPDX-License-Identifier: MIT
# The timeconv CLI end to end, offline, on the snapshot files of tests/client-lib/data.
# Usage: test-client-cli.sh TIMECONV DATA_DIR
set -u
tc=$1
data=$2
good=$data/client-snapshots.json
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0
failed=0

# check NAME WANT_STATUS WANT_STDOUT_FILE: compares the last run ($status, $tmp/out).
check() {
        n=$((n + 1))
        if [ "$status" = "$2" ] && cmp -s "$3" "$tmp/out"; then
                echo "ok $n - $1"
        else
                echo "not ok $n - $1"
                echo "# status $status (want $2); stdout, then stderr:"
                sed 's/^/#   /' "$tmp/out" "$tmp/err"
                failed=1
        fi
}

# check_err NAME WANT_STATUS PATTERN: the status and an extended regex on stderr.
check_err() {
        n=$((n + 1))
        if [ "$status" = "$2" ] && grep -Eq -- "$3" "$tmp/err"; then
                echo "ok $n - $1"
        else
                echo "not ok $n - $1"
                echo "# status $status (want $2); stderr:"
                sed 's/^/#   /' "$tmp/err"
                failed=1
        fi
}

run() {
        "$tc" "$@" > "$tmp/out" 2> "$tmp/err"
        status=$?
}

run_in() {
        input=$1
        shift
        printf "$input" | "$tc" "$@" > "$tmp/out" 2> "$tmp/err"
        status=$?
}

want() {
        printf "$1" > "$tmp/want"
}

conv="convert --from custom --to boottime --snapshots $good --mode nearest"

# Perfetto's second example: CUSTOM 3503 -> BOOTTIME 7703; 0 extrapolates from the first.
run $conv 3503 0
want '7703 \302\2614 ns\n4100 \302\2613 ns\n'
check "values from the arguments, each with its bound (VALUE ±BOUND ns)" 0 "$tmp/want"

run_in '3503\n0\n' $conv
check "the same values from standard input" 0 "$tmp/want"

run_in '3503\r\n  0 \n' $conv
check "CRLF and spaces around a value" 0 "$tmp/want"

run $conv --json 3503 0
want '{"in":"3503","out":7703,"uncertainty_ns":4}\n{"in":"0","out":4100,"uncertainty_ns":3}\n'
check "--json: \"in\" is the input as given" 0 "$tmp/want"

run_in '3503\nabc\n3000\n99999999999999999999\n\n' $conv
want '7703 \302\2614 ns\nerror: not an integer\n7200 \302\2612 ns\nerror: value out of range\nerror: not an integer\n'
check "a bad line fails alone, in its place; exit 65 (bad data)" 65 "$tmp/want"

run_in '3503\nx"y\n' $conv --json
want '{"in":"3503","out":7703,"uncertainty_ns":4}\n{"in":"x\\"y","error":"not an integer"}\n'
check "--json with a bad line: its text, escaped, and the reason" 65 "$tmp/want"

n=$((n + 1))
if ! command -v jq > /dev/null; then
        # .ci/run installs jq: without it this is a failure, never a skip.
        echo "not ok $n - every --json line is a JSON object: jq is not installed (Debian package jq)"
        failed=1
elif jq -e -c . "$tmp/out" > /dev/null 2>&1 && [ "$(jq -s length "$tmp/out")" = 2 ]; then
        echo "ok $n - every --json line is a JSON object (jq)"
else
        echo "not ok $n - every --json line is a JSON object (jq)"
        failed=1
fi

# Bytes that are not UTF-8 are echoed as U+FFFD, so that every line is JSON.
run_in 'a\377b\300\200\355\240\200\342\202\254\n' $conv --json
want '{"in":"a\\ufffdb\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\342\202\254","error":"not an integer"}\n'
check "--json: a byte that is not UTF-8 is \\ufffd (a lone byte, overlong, surrogate), UTF-8 stays" 65 "$tmp/want"

head -c 65536 /dev/urandom > "$tmp/random"
"$tc" $conv --json < "$tmp/random" > "$tmp/out" 2> "$tmp/err"
n=$((n + 1))
if [ "$(wc -l < "$tmp/out")" -gt 0 ] && iconv -f UTF-8 -t UTF-8 "$tmp/out" > /dev/null 2>&1 &&
   jq -e -c . "$tmp/out" > /dev/null 2>&1; then
        echo "ok $n - --json on 64 KiB of random bytes: valid UTF-8 (iconv), every line JSON (jq)"
else
        echo "not ok $n - --json on 64 KiB of random bytes: valid UTF-8 (iconv), every line JSON (jq)"
        failed=1
fi

run convert --from custom --to island_a --snapshots "$good" 1 2
want 'error: no path between the domains\nerror: no path between the domains\n'
check "no path: an error per value" 1 "$tmp/want"

run $conv -- -5
want '4095 \302\2614 ns\n'
check "a negative value after --" 0 "$tmp/want"

run $conv -5
check_err "a negative value without --: usage (64), and the hint to put it after --" 64 \
        "'-5' reads as an option: put negative values after '--'"
n=$((n + 1))
if ! grep -q "invalid option" "$tmp/err"; then echo "ok $n - and not getopt's own words"; else
        echo "not ok $n - and not getopt's own words"; failed=1; fi

run convert --from monotonic --to boottime --snapshots "$good" --mode drift 1250
want '5250 \302\2611 ns\n'
check "--mode drift" 0 "$tmp/want"

seq 3000 3799 > "$tmp/in"
awk '{ print $1 + 4200 }' "$tmp/in" > "$tmp/want"
"$tc" $conv < "$tmp/in" > "$tmp/full" 2> "$tmp/err"
status=$?
cut -d ' ' -f 1 "$tmp/full" > "$tmp/out"
check "800 values from standard input, in order" 0 "$tmp/want"

{ head -c 1100000 /dev/zero | tr '\0' '1'; printf '\n3503\n'; } > "$tmp/in"
"$tc" $conv < "$tmp/in" > "$tmp/out" 2> "$tmp/err"
status=$?
want 'error: line too long\n7703 \302\2614 ns\n'
check "a line longer than the buffer is one error" 65 "$tmp/want"

run_in '' $conv
want ''
check "empty input, empty output" 0 "$tmp/want"

"$tc" $conv < / > "$tmp/out" 2> "$tmp/err"
status=$?
check_err "standard input that cannot be read (a directory): exit 66, as a file" 66 'cannot read standard input'

printf '{"snapshots": []}\n' > "$tmp/empty.json"
run convert --from monotonic --to boottime --snapshots "$tmp/empty.json" 1
check_err "a file without snapshots says so (exit 65)" 65 'empty.json: the file has no snapshots$'

# An old export (wrap_bits 0, "ticks") and a new one (64, "tick") read the same: files made
# by an earlier release still load.
for form in '0 ticks frames' '64 tick frame'; do
        set -- $form
        printf '{"domains": [{"name": "a", "unit": "ns", "wrap_bits": %s},\n' "$1" > "$tmp/units.json"
        printf ' {"name": "g", "unit": "%s", "period_ns": 2}, {"name": "v", "unit": "%s", "period_ns": 4}],\n' \
                "$2" "$3" >> "$tmp/units.json"
        printf ' "snapshots": [{"clocks": [{"domain": "a", "ts": 1000}, {"domain": "g", "ts": 10},\n' \
                >> "$tmp/units.json"
        printf '                          {"domain": "v", "ts": 7}]}]}\n' >> "$tmp/units.json"
        run convert --from a --to g --snapshots "$tmp/units.json" --mode nearest 1100
        want '60 \302\2611 ns\n'
        check "wrap_bits $1 and unit $2 read alike (1100 ns -> tick 60)" 0 "$tmp/want"
done
set -- "$tc" "$data"

# Two machines' exports related through realtime (machine 1's 0.3 ms ahead), with a stated 1 ms.
printf '{"snapshots": [{"clocks": [{"domain": "monotonic", "ts": 1000000000},\n' > "$tmp/a.json"
printf '  {"domain": "realtime", "ts": 1000000000000000000}]}]}\n' >> "$tmp/a.json"
printf '{"snapshots": [{"clocks": [{"domain": "monotonic", "ts": 5000000000},\n' > "$tmp/b.json"
printf '  {"domain": "realtime", "ts": 1000000000000300000}]}]}\n' >> "$tmp/b.json"
run convert --snapshots "$tmp/a.json" --snapshots "m1=$tmp/b.json" --shared realtime=1000000 --mode nearest \
        --from m1:monotonic --to monotonic 5000000000
want '1000300000 \302\2611000300 ns\n'
check "--snapshots a --snapshots m1=b --shared realtime=1000000: m1:monotonic -> monotonic with the bound" 0 \
        "$tmp/want"
# --shared realtime alone: the bound from the files (the kernels' maxerror, 0.4 + 0.2 ms)
sed 's/"ts": 1000000000000000000}/"ts": 1000000000000000000, "utc_maxerror_ns": 400000}/' "$tmp/a.json" > "$tmp/au.json"
sed 's/"ts": 1000000000000300000}/"ts": 1000000000000300000, "utc_maxerror_ns": 200000}/' "$tmp/b.json" > "$tmp/bu.json"
run convert --snapshots "$tmp/au.json" --snapshots "m1=$tmp/bu.json" --shared realtime --mode nearest \
        --from m1:monotonic --to monotonic 5000000000
want '1000300000 \302\261600450 ns\n'
check "--shared realtime: the bound from the files' utc_maxerror_ns" 0 "$tmp/want"
run convert --snapshots "$tmp/a.json" --snapshots "m1=$tmp/b.json" --from m1:monotonic --to monotonic 5000000000
check_err "several --snapshots without --shared: a usage error" 64 'need --shared CLOCK=BOUND_NS'
run convert --snapshots "$tmp/a.json" --snapshots "$tmp/b.json" --shared realtime=1 --from monotonic --to realtime 1
check_err "two files of machine 0: refused (exit 65)" 65 'one FILE of machine 0, the others mN=FILE'

run convert --from custom --to boottime --snapshots "$data/client-malformed.json" 1
check_err "a malformed file: exit 65, with line, column and element" 65 \
        'client-malformed.json:5:49: snapshots\[1\]\.clocks\[1\]\.ts: not an integer'
n=$((n + 1))
if [ -s "$tmp/out" ]; then echo "not ok $n - and nothing on stdout"; failed=1; else echo "ok $n - and nothing on stdout"; fi

printf '{"snapshots": [\n  {"clocks": [}\n]}\n' > "$tmp/syntax.json"
run convert --from a --to b --snapshots "$tmp/syntax.json" 1
check_err "invalid JSON: exit 65, with line and column" 65 'syntax.json:2:[0-9]+: invalid JSON'

run convert --from a --to b --snapshots "$tmp/none.json" 1
check_err "a missing file: exit 66" 66 'none.json: cannot open the file'

run convert --from custom --to nope --snapshots "$good" 1
check_err "an unknown domain: exit 65, named once, with the domains there are" 65 \
        "no domain 'nope' in the snapshots; they have: custom, monotonic, boottime, island_a, island_b"

DBUS_SESSION_BUS_ADDRESS=unix:path=/nonexistent/bus run convert --from custom --to boottime 1
check_err "no --snapshots and no bus: live mode needs the daemon, exit 69, naming the address tried" 69 \
        'cannot connect to the session bus at \$DBUS_SESSION_BUS_ADDRESS \(unix:path=/nonexistent/bus\): '

env -u DBUS_SESSION_BUS_ADDRESS XDG_RUNTIME_DIR=/nonexistent "$tc" domains > "$tmp/out" 2> "$tmp/err"
status=$?
check_err "no address: says so, and names \$XDG_RUNTIME_DIR/bus, the path tried" 69 \
        '\$DBUS_SESSION_BUS_ADDRESS is not set, and /nonexistent/bus \(from \$XDG_RUNTIME_DIR\)'
env -u DBUS_SESSION_BUS_ADDRESS -u XDG_RUNTIME_DIR "$tc" domains > "$tmp/out" 2> "$tmp/err"
status=$?
check_err "neither: says which variables were missing" 69 \
        'neither \$DBUS_SESSION_BUS_ADDRESS nor \$XDG_RUNTIME_DIR is set'

run convert --from custom --snapshots "$good" 1
check_err "no --to: usage error (64)" 64 'needs --from and --to'

run convert --from custom --to boottime --snapshots "$good" --mode fast 1
check_err "a bad --mode: usage error (64)" 64 "unknown mode 'fast'"

# --window on an Android dump does not speak of a frame log it is not.
printf '16666667\n100 200 300\n16666767 16666867 16666967\n33333434 33333534 33333634\n' > "$tmp/sf.txt"
run frames --window 0x10 "$tmp/sf.txt"
check_err "frames --window on a SurfaceFlinger dump: exit 1, and says the dump has no windows" 1 \
        'no window 0x10 in the input: --window picks one of a frame log, and SurfaceFlinger --latency has none'

run frobnicate
check_err "an unknown command: usage error (64)" 64 "unknown command 'frobnicate'"

run
check_err "no command: usage error (64)" 64 'missing command'

for cmd in convert domains now monitor push export frames; do
        run "$cmd" --help
        n=$((n + 1))
        if [ $status = 0 ] && head -n 1 "$tmp/out" | grep -Eq "^Usage: timeconv $cmd( |\$)" &&
           ! grep -q '^Commands:' "$tmp/out"; then
                echo "ok $n - $cmd --help prints the help of $cmd alone"
        else
                echo "not ok $n - $cmd --help prints the help of $cmd alone"; failed=1
        fi
done

run --help
n=$((n + 1))
if [ $status = 0 ] && grep -q '^Commands:' "$tmp/out" && grep -q '^  push DOMAIN --against' "$tmp/out"; then
        echo "ok $n - --help lists every command"
else
        echo "not ok $n - --help lists every command"; failed=1
fi

run --help
n=$((n + 1))
if grep -q -- '-f A, -t B, -s FILE, -m MODE, -j' "$tmp/out" && grep -q '^Exit status: 0 success' "$tmp/out"; then
        echo "ok $n - --help names the short options and the exit statuses"
else
        echo "not ok $n - --help names the short options and the exit statuses"; failed=1
fi

run convert --help
n=$((n + 1))
if [ "$(grep -c 'Exit status' "$tmp/out")" = 1 ] &&
   grep -q "^Exit status: see 'timeconv --help' or timeconv(1)" "$tmp/out" &&
   ! grep -q '74 write error' "$tmp/out"; then
        echo "ok $n - a command's help points to the exit statuses, not the whole list"
else
        echo "not ok $n - a command's help points to the exit statuses, not the whole list"; failed=1
fi

run --version
n=$((n + 1))
if [ $status = 0 ] && grep -Eq '^timeconv [0-9]+\.[0-9]+\.[0-9]+$' "$tmp/out"; then
        echo "ok $n - --version"
else
        echo "not ok $n - --version"; failed=1
fi

run --help
n=$((n + 1))
if [ $status = 0 ] && grep -q 'convert --from A --to B --snapshots FILE' "$tmp/out"; then
        echo "ok $n - --help describes convert"
else
        echo "not ok $n - --help describes convert"; failed=1
fi

echo "1..$n"
exit $failed
