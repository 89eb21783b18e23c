#!/bin/sh
# SPDX-License-Identifier: MIT
#
# `meson install --destdir` puts the user unit, the activation file and the D-Bus XML where
# the options say, with ExecStart/Exec pointing at the installed daemon (TAP).
# usage: test-install.sh MESON BUILD_ROOT PREFIX BINDIR UNITDIR SERVICESDIR INTERFACESDIR XML_SOURCE

set -u

meson=$1
build_root=$2
prefix=$3
bindir=$4
unitdir=$5
servicesdir=$6
interfacesdir=$7
xml_source=$8

. "$(dirname "$0")/../tap.sh"

# A directory option may be relative to the prefix, like meson's own.
absolute() {
        case $1 in
        /*) echo "$1" ;;
        *) echo "$prefix/$1" ;;
        esac
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dest="$tmp/dest"

# --no-rebuild: meson test has built everything already, and a test must not run ninja.
$meson install -C "$build_root" --destdir "$dest" --no-rebuild >"$tmp/install.log" 2>&1
rc=$?
ok $rc "meson install --destdir succeeds"
[ $rc -eq 0 ] || sed 's/^/# /' "$tmp/install.log"

bindir=$(absolute "$bindir")
unit="$dest$(absolute "$unitdir")/timeconvd.service"
activation="$dest$(absolute "$servicesdir")/org.timeconv.Clock1.service"
xml="$dest$(absolute "$interfacesdir")/org.timeconv.Clock1.xml"

[ -f "$unit" ]
ok $? "the unit is installed as ${unit#"$dest"}"
grep -qxF "ExecStart=$bindir/timeconvd" "$unit" 2>/dev/null
ok $? "the installed unit starts $bindir/timeconvd"
! grep -qE '@[A-Za-z_]+@' "$unit" 2>/dev/null && [ -f "$unit" ]
ok $? "the installed unit has no unsubstituted @variables@"

[ -f "$activation" ]
ok $? "the activation file is installed as ${activation#"$dest"}"
grep -qxF "Exec=$bindir/timeconvd" "$activation" 2>/dev/null
ok $? "the installed activation file runs $bindir/timeconvd"

cmp -s "$xml_source" "$xml"
ok $? "the interface XML is installed unchanged as ${xml#"$dest"}"

# The build-tree variants (ExecStart in the build tree) are for tests only.
[ "$(find "$dest" -name timeconvd.service | wc -l)" -eq 1 ] &&
        [ "$(find "$dest" -name org.timeconv.Clock1.service | wc -l)" -eq 1 ]
ok $? "exactly one unit and one activation file are installed"

tap_done
