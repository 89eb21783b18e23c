#!/bin/sh
# SPDX-License-Identifier: MIT
# libtimeconv exports timeconv_* and nothing else. Usage: test-client-symbols.sh LIBTIMECONV_SO
set -u
lib=$1
command -v nm > /dev/null || { echo "1..0 # SKIP nm is not installed"; exit 0; }
syms=$(nm -D --defined-only "$lib") || { echo "not ok 1 - nm $lib"; echo "1..1"; exit 1; }
failed=0

# Version nodes (type A, e.g. TIMECONV_0.1) are not symbols anyone can call.
leaks=$(printf '%s\n' "$syms" | awk '$2 != "A" { sub(/@.*/, "", $3); print $3 }' | grep -v '^timeconv_')
if [ -z "$leaks" ]; then
        echo "ok 1 - every exported symbol starts with timeconv_"
else
        echo "not ok 1 - every exported symbol starts with timeconv_"
        printf '%s\n' "$leaks" | sed 's/^/# leaked: /'
        failed=1
fi

n=1
for want in timeconv_version timeconv_strerror timeconv_snapshots_load timeconv_snapshots_load_buffer \
            timeconv_snapshots_free timeconv_snapshots_convert timeconv_snapshots_count_domains \
            timeconv_snapshots_domain_name timeconv_open timeconv_open_address timeconv_close \
            timeconv_convert timeconv_convert_many timeconv_now timeconv_domain_id timeconv_convert_id \
            timeconv_now_id timeconv_set_paths timeconv_last_path timeconv_list_domains \
            timeconv_domains_free timeconv_export_snapshots timeconv_set_event_handler \
            timeconv_get_fd timeconv_process; do
        n=$((n + 1))
        if printf '%s\n' "$syms" | grep -q " T $want@@TIMECONV_0.1\$"; then
                echo "ok $n - $want is exported, versioned TIMECONV_0.1"
        else
                echo "not ok $n - $want is exported, versioned TIMECONV_0.1"
                failed=1
        fi
done

n=$((n + 1))
if printf '%s\n' "$syms" | grep -Eq ' (snapshot_graph_|json_locate|unit_to_ns|shared_table_|live_|bus_timeconv_|sd_bus_)'; then
        echo "not ok $n - calibrate, loader, live and sd-bus internals stay hidden"
        failed=1
else
        echo "ok $n - calibrate, loader, live and sd-bus internals stay hidden"
fi
echo "1..$n"
exit $failed
