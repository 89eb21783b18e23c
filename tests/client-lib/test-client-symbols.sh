#!/bin/sh
# SPDX-License-Identifier: MIT
# libtimeconv exports what its symbol map names, each function by name in the node of the release
# (TIMECONV_<version>), and nothing else: every TIMECONV_EXPORT function of the sources is in the
# map, every name of the map is exported, internals stay hidden.
# Usage: test-client-symbols.sh LIBTIMECONV_SO SYMBOL_MAP SOURCE_DIR VERSION
set -u
lib=$1
map=$2
srcdir=$3
version=$4
node="TIMECONV_$version"
. "$(dirname "$0")/../tap.sh"

syms=$(nm -D --defined-only "$lib") || { echo "not ok 1 - nm $lib"; echo "1..1"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The names of the map (comments and the local: catch-all left out), of the sources, of the .so.
sed -e 's#/\*.*\*/##' -e '/^\/\*/d' -e '/^ \*/d' "$map" | grep -oE '^[[:space:]]+timeconv_[a-z0-9_]+;' |
        tr -d ' \t;' | sort >"$tmp/map"
grep -hzoE 'TIMECONV_EXPORT[^;{]*\(' "$srcdir"/*.c | tr '\0' '\n' |
        grep -oE 'timeconv_[a-z0-9_]+[[:space:]]*\($' | tr -d ' \t(' | sort -u >"$tmp/src"
printf '%s\n' "$syms" | awk '$2 == "T" { print $3 }' | sort >"$tmp/so"

! sed -e 's#/\*.*\*/##' -e '/^\/\*/d' -e '/^ \*/d' "$map" | grep -vE '^[[:space:]]*\*;$' | grep -q '\*'
ok $? "the map names functions one by one (no timeconv_* pattern)"

grep -qE "^$node \{" "$map"
ok $? "the map's node is $node, the release in meson.build"

cmp -s "$tmp/map" "$tmp/src"
rc=$?
ok $rc "the map names exactly the TIMECONV_EXPORT functions of the sources ($(wc -l <"$tmp/src"))"
[ $rc -eq 0 ] || diff "$tmp/map" "$tmp/src" | sed 's/^/# /'

sed "s/\$/@@$node/" "$tmp/map" | cmp -s - "$tmp/so"
rc=$?
ok $rc "the library exports exactly the map's functions, each versioned $node"
[ $rc -eq 0 ] || sed "s/\$/@@$node/" "$tmp/map" | diff - "$tmp/so" | sed 's/^/# /'

# Version nodes (type A) are not symbols anyone can call; anything else must be ours.
leaks=$(printf '%s\n' "$syms" | awk '$2 != "A" { sub(/@.*/, "", $3); print $3 }' | grep -v '^timeconv_')
[ -z "$leaks" ]
ok $? "every exported symbol starts with timeconv_"
[ -z "$leaks" ] || printf '%s\n' "$leaks" | sed 's/^/# leaked: /'

! printf '%s\n' "$syms" | grep -Eq ' (snapshot_graph_|json_locate|unit_to_ns|shared_table_|live_|bus_timeconv_|sd_bus_|parse_)'
ok $? "calibrate, loader, live, basic and sd-bus internals stay hidden"

tap_done
