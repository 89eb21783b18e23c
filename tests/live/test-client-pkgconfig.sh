#!/bin/sh
# SPDX-License-Identifier: MIT
# timeconv.pc works on a machine without jansson's and libsystemd's .pc files (a user of the
# library needs neither for the header): pkg-config reads only the build's timeconv.pc, nothing
# from the system (PKG_CONFIG_LIBDIR empty).
# Usage: test-client-pkgconfig.sh PC_DIR VERSION
set -u
pcdir=$1
version=$2
. "$(dirname "$0")/../tap.sh"
pc() {
        PKG_CONFIG_LIBDIR=/nonexistent PKG_CONFIG_PATH="$pcdir" pkg-config "$@"
}

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

tap_done
