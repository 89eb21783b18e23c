#!/bin/sh
# SPDX-License-Identifier: MIT
# timeconv.pc works on a machine without jansson's and libsystemd's .pc files (a user of the
# library needs neither for the header): pkg-config reads only the build's timeconv.pc, nothing
# from the system (PKG_CONFIG_LIBDIR empty). And the build tree's (UNINSTALLED_DIR, meson's
# meson-uninstalled/) gives the build's include and library directories: a program compiles and
# links with its flags alone, and runs against the build tree's libtimeconv (offline: a
# conversion from a JSON snapshot file in memory, no daemon).
# Usage: test-client-pkgconfig.sh PC_DIR VERSION UNINSTALLED_DIR CC [CC_ARGS...]
set -u
pcdir=$1
version=$2
uninstalled=$3
shift 3
. "$(dirname "$0")/../tap.sh"
pc() {
        PKG_CONFIG_LIBDIR=/nonexistent PKG_CONFIG_PATH="$pcdir" pkg-config "$@"
}
upc() {
        PKG_CONFIG_LIBDIR=/nonexistent PKG_CONFIG_PATH="$uninstalled" pkg-config "$@"
}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

if ! command -v pkg-config >/dev/null; then
        # .ci/run installs pkg-config: without it this is a failure, never a skip.
        echo "not ok 1 - pkg-config is not installed (Debian package pkg-config)"
        echo "1..1"
        exit 1
fi

[ -f "$pcdir/timeconv.pc" ]
ok $? "the build made timeconv.pc"

! PKG_CONFIG_LIBDIR=/nonexistent pkg-config --exists jansson libsystemd 2>/dev/null
ok $? "jansson.pc and libsystemd.pc are out of reach here"

cflags=$(pc --cflags timeconv)
ok $? "pkg-config --cflags timeconv: $cflags"
case $cflags in *-I*) s=0 ;; *) s=1 ;; esac
ok $s "it names the include directory"

libs=$(pc --libs timeconv)
ok $? "pkg-config --libs timeconv: $libs"
case " $libs " in *" -ltimeconv "*) s=0 ;; *) s=1 ;; esac
ok $s "it links -ltimeconv"

[ -z "$(pc --print-requires-private timeconv)" ] && [ -z "$(pc --print-requires timeconv)" ]
ok $? "no Requires, public or private"

static=$(pc --static --libs timeconv)
case " $static " in *" -ljansson "*"-lsystemd "*) s=0 ;; *) s=1 ;; esac
ok $s "a static link gets jansson and libsystemd from Libs.private: $static"

[ "$(pc --modversion timeconv)" = "$version" ]
ok $? "its version is the release's, $version"

cat > "$tmp/prog.c" <<'PROG'
#include <stdio.h>
#include <string.h>
#include <timeconv.h>

int main(void) {
        static const char json[] = "{\"snapshots\":[{\"clocks\":[{\"domain\":\"boottime\",\"ts\":2000},"
                                   "{\"domain\":\"monotonic\",\"ts\":1000}]}]}";
        struct timeconv_snapshots *s = NULL;
        struct timeconv_error error;
        int64_t v, u;

        if (timeconv_snapshots_load_buffer(json, strlen(json), &s, &error) < 0)
                return 1;
        if (timeconv_snapshots_convert(s, TIMECONV_MODE_NEAREST, "monotonic", "boottime", 1500, &v, &u) < 0)
                return 1;
        printf("%lld\n", (long long) v);
        timeconv_snapshots_free(s);
        return 0;
}
PROG

flags=$(upc --cflags --libs timeconv 2> "$tmp/pc.err")
ok $? "pkg-config --cflags --libs timeconv with PKG_CONFIG_PATH=meson-uninstalled: $flags"
sed 's/^/# /' "$tmp/pc.err"

inc=$(upc --cflags-only-I timeconv 2> /dev/null)
inc=${inc%% *}
[ -n "$inc" ] && [ -f "${inc#-I}/timeconv.h" ] && [ -f "${inc#-I}/timeconv-framesync.h" ]
ok $? "its -I names the directory of timeconv.h and timeconv-framesync.h ($inc)"

libdir=$(upc --libs-only-L timeconv 2> /dev/null)
libdir=${libdir#-L}
libdir=${libdir%% *}
[ -n "$libdir" ] && [ -e "$libdir/libtimeconv.so" ]
ok $? "its -L names the build tree's libtimeconv.so ($libdir)"

# shellcheck disable=SC2086 # pkg-config's flags are words
"$@" -o "$tmp/prog" "$tmp/prog.c" $flags > "$tmp/cc.out" 2>&1
ok $? "a program compiles and links with those flags alone"
sed 's/^/# /' "$tmp/cc.out"

out=$(LD_LIBRARY_PATH="$libdir" "$tmp/prog" 2>&1) && [ "$out" = 2500 ]
ok $? "it runs against the build tree's library: monotonic 1500 -> boottime $out (want 2500)"

# Frame sync, the library's other header: the same flags.
cat > "$tmp/frames.c" <<'PROG'
#include <timeconv-framesync.h>

int main(void) {
        size_t i = 9;

        return timeconv_sync_fence_index(12, 2, &i) == 0 && i == 1 ? 0 : 1;
}
PROG
# shellcheck disable=SC2086 # pkg-config's flags are words
"$@" -o "$tmp/frames" "$tmp/frames.c" $flags > "$tmp/cc.out" 2>&1 && LD_LIBRARY_PATH="$libdir" "$tmp/frames"
ok $? "a program of timeconv-framesync.h builds with the same flags and runs"
sed 's/^/# /' "$tmp/cc.out"

tap_done
