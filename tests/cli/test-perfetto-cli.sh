#!/bin/sh
# SPDX-License-Identifier: MIT
# timeconv trace and convert --snapshots on Perfetto traces written by protoc (tests/client-lib/perfetto):
# two files concatenated with cat, text and JSON Lines, a malformed trace refused with its offset.
# Usage: test-perfetto-cli.sh TIMECONV PROTO_DIR
set -u
tc=$1
dir=$2
. "$(dirname "$0")/../tap.sh"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
if ! command -v protoc >/dev/null || ! command -v jq >/dev/null; then
        echo "Bail out! protoc or jq missing (protobuf-compiler and jq, which .ci/run installs)"
        exit 1
fi

encode() {
        protoc --encode=perfetto.protos.Trace -I "$dir" "$dir/trace.proto"
}

encode >"$tmp/a.pftrace" <<'PB'
packet { trusted_packet_sequence_id: 1 clock_snapshot { clocks { clock_id: 6 timestamp: 1000000 }
  clocks { clock_id: 3 timestamp: 500000 } clocks { clock_id: 64 timestamp: 100 unit_multiplier_ns: 1000 } } }
packet { trusted_packet_sequence_id: 1 timestamp: 600000 timestamp_clock_id: 3 }
packet { trusted_packet_sequence_id: 1 timestamp: 150 timestamp_clock_id: 64 }
PB
encode >"$tmp/b.pftrace" <<'PB'
packet { trusted_packet_sequence_id: 2 timestamp: 700000 timestamp_clock_id: 3 }
packet { trusted_packet_sequence_id: 2 timestamp: 150 timestamp_clock_id: 64 }
PB
cat "$tmp/a.pftrace" "$tmp/b.pftrace" >"$tmp/both.pftrace"

"$tc" trace "$tmp/both.pftrace" >"$tmp/out" 2>"$tmp/err"
status=$?
ok $((status != 1)) "a packet not placed: exit status 1 (got $status)"
grep -q '^#1 seq 1 monotonic 600000 -> 1100000 ±100 ns$' "$tmp/out"
ok $? "text: monotonic 600000 -> 1100000 ±100 ns"
grep -q '^#3 seq 2 monotonic 700000 -> 1200000 ' "$tmp/out"
ok $? "text: the second file's packet (index 3) through the first file's snapshot"
grep -q '^#4 seq 2 64@2 150 error: its clock is in no snapshot$' "$tmp/out"
ok $? "text: 64@2 is not 64@1"
grep -Eq '^  64 +64@1 +sequence 1 +1 +100\.\.100 x 1000 ns$' "$tmp/out"
ok $? "summary: the clock 64@1, its scope, its snapshot, its span and unit"
grep -q '^packets: 5, with a timestamp: 4, placed: 3, not placed: 1$' "$tmp/out" &&
        grep -q '^  1 its clock is in no snapshot$' "$tmp/out"
ok $? "summary: packets not placed, by reason"
[ "$status" -eq 1 ] || sed 's/^/# /' "$tmp/out" "$tmp/err"

"$tc" trace --json --to monotonic "$tmp/both.pftrace" >"$tmp/out" 2>"$tmp/err"
jq -e -s 'length == 4 and .[0].packet == 1 and .[0].trace_ts == 600000 and .[1].clock == "64@1"
          and .[1].trace_ts == 550000 and .[1].uncertainty_ns >= 0 and .[3].error != null
          and .[2].sequence == 2 and .[2].machine == 0 and .[2].ts == 700000' "$tmp/out" >/dev/null
ok $? "--json --to monotonic: JSON Lines with packet, clock, ts, trace_ts, uncertainty_ns or error"

"$tc" convert --snapshots "$tmp/both.pftrace" --from 64@1 --to boottime --mode nearest 150 >"$tmp/out" 2>"$tmp/err"
status=$?
[ "$status" -eq 0 ] && [ "$(cat "$tmp/out")" = "1050000 ±50 ns" ]
ok $? "convert --snapshots takes the trace: 64@1 150 -> $(cat "$tmp/out")"

# timeconv's own clocks by their ids (FNV-1a("org.timeconv." + name) | 0x80000000): x11_us
# 2354052935 (in us, as timeconv export writes it), gpu0 2910203390; 2161478284 is "foo", no
# domain of timeconv's. x11_us is read as live reads it: V + 2^32 x 1000 (mutter's form) is V.
encode >"$tmp/own.pftrace" <<'PB'
packet { trusted_packet_sequence_id: 1 clock_snapshot { clocks { clock_id: 6 timestamp: 5000000000 }
  clocks { clock_id: 2354052935 timestamp: 4000000 unit_multiplier_ns: 1000 } clocks { clock_id: 2161478284 timestamp: 7 }
  clocks { clock_id: 2910203390 timestamp: 9000 } } }
packet { trusted_packet_sequence_id: 1 timestamp: 4000500 timestamp_clock_id: 2354052935 }
packet { trusted_packet_sequence_id: 1 timestamp: 4294971296500 timestamp_clock_id: 2354052935 }
packet { trusted_packet_sequence_id: 1 timestamp: 5001000000 }
PB
"$tc" trace "$tmp/own.pftrace" >"$tmp/out" 2>"$tmp/err"
grep -q '^#1 seq 1 x11_us 4000500 -> 5000500000 ' "$tmp/out" &&
        grep -q '^#2 seq 1 x11_us 4294971296500 -> 5000500000 ' "$tmp/out"
ok $? "text: packets stamped by x11_us's id show x11_us, its unreduced form placed as V"
grep -Eq '^  2354052935 +x11_us +global ' "$tmp/out" && grep -Eq '^  2910203390 +gpu0 +global ' "$tmp/out" &&
        grep -Eq '^  2161478284 +2161478284 +global ' "$tmp/out"
ok $? "summary: x11_us and gpu0 by name, an id of no timeconv domain in decimal"
[ $? -eq 0 ] || sed 's/^/# /' "$tmp/out" "$tmp/err"
"$tc" trace --json --to x11_us "$tmp/own.pftrace" >"$tmp/out" 2>"$tmp/err"
jq -e -s '.[2].clock == "boottime" and .[2].trace_ts == 4001000' "$tmp/out" >/dev/null
ok $? "--to x11_us: boottime 5001000000 is x11_us 4001000"
"$tc" convert --snapshots "$tmp/own.pftrace" --from x11_us --to gpu0 4000500 >"$tmp/out" 2>"$tmp/err"
grep -q '^509000 ' "$tmp/out"
ok $? "convert --snapshots --from x11_us --to gpu0 by name ($(cat "$tmp/out" "$tmp/err"))"

printf '\n\003\102\001\000' >"$tmp/bad.pftrace"
"$tc" trace "$tmp/bad.pftrace" >"$tmp/out" 2>"$tmp/err"
status=$?
[ "$status" -eq 65 ] && grep -q 'byte 2: field 8: wire type length-delimited, expected varint' "$tmp/err"
ok $? "a malformed trace: exit 65, the byte offset said ($(cat "$tmp/err"))"

tap_done
