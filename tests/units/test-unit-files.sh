#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Checks the systemd user unit and the D-Bus activation file (TAP).
# usage: test-unit-files.sh UNIT_TEMPLATE ACTIVATION_TEMPLATE BUILD_TREE_UNIT BUILD_TREE_SERVICES_DIR DAEMON
#
# systemd-analyze verify refuses a unit whose ExecStart does not exist, so the templates are
# verified with ExecStart pointing at a stub; the build-tree unit is verified too once DAEMON
# (the built timeconvd) exists.

set -u

unit_template=$1
activation_template=$2
build_tree_unit=$3
build_tree_services=$4
daemon=$5

. "$(dirname "$0")/../tap.sh"
diag() {
        sed 's/^/# /'
}

# .ci/run installs all of these: one that is missing is a failure, never a skip.
for need in systemd-analyze:systemd dbus-daemon:dbus-daemon dbus-send:dbus-bin; do
        if ! command -v "${need%%:*}" >/dev/null 2>&1; then
                echo "Bail out! ${need%%:*} is not installed (Debian package ${need#*:}, which .ci/run installs)"
                exit 1
        fi
done

tmp=$(mktemp -d)
dbus_pid=
cleanup() {
        if [ -n "$dbus_pid" ]; then
                kill "$dbus_pid" 2>/dev/null
                wait "$dbus_pid" 2>/dev/null
        fi
        rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM

# verify UNIT-FILE: systemd-analyze --user verify, failing also on any warning about the file
# (systemd only warns, exit 0, about an unknown key or a bad value).
verify() {
        rt="$tmp/runtime"
        mkdir -p "$rt" && chmod 700 "$rt"
        out=$(cd "$(dirname "$1")" && XDG_RUNTIME_DIR="$rt" \
                systemd-analyze --user --man=no verify "./$(basename "$1")" 2>&1)
        rc=$?
        [ -n "$out" ] && printf '%s\n' "$out" | diag
        [ $rc -eq 0 ] || return 1
        ! printf '%s\n' "$out" | grep -q "$(basename "$1")"
}

mkdir -p "$tmp/bin" "$tmp/unit" "$tmp/bad"
printf '#!/bin/sh\nexit 0\n' > "$tmp/bin/timeconvd"
chmod +x "$tmp/bin/timeconvd"
sed "s|@bindir@|$tmp/bin|g" "$unit_template" > "$tmp/unit/timeconvd.service"

verify "$tmp/unit/timeconvd.service"
ok $? "the unit template passes systemd-analyze --user verify"

# The check must be able to fail: a bad value and a missing binary are both caught.
sed 's/^Restart=.*/Restart=sometimes/' "$tmp/unit/timeconvd.service" > "$tmp/bad/timeconvd.service"
verify "$tmp/bad/timeconvd.service" >/dev/null
[ $? -ne 0 ]
ok $? "a unit with a bad Restart= value is caught"
sed "s|^ExecStart=.*|ExecStart=$tmp/nonexistent/timeconvd|" "$tmp/unit/timeconvd.service" \
        > "$tmp/bad/timeconvd.service"
verify "$tmp/bad/timeconvd.service" >/dev/null
[ $? -ne 0 ]
ok $? "a unit whose ExecStart is missing is caught"

for line in "Type=notify" "BusName=org.timeconv.Clock1" "Restart=on-failure" "WatchdogSec=30s" \
            "NoNewPrivileges=yes" "ProtectSystem=strict" "ProtectHome=read-only" \
            "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6" "WantedBy=graphical-session.target" \
            "PartOf=graphical-session.target" "After=graphical-session.target" \
            "Documentation=man:timeconvd(8)"; do
        grep -qxF "$line" "$unit_template"
        ok $? "the unit says $line"
done
! grep -q '^MemoryDenyWriteExecute=' "$unit_template"
ok $? "the unit allows W+X memory (llvmpipe's JIT)"

# The sandbox, as systemd rates it: a setting dropped from the unit raises the exposure above
# what it is now (5.3 with systemd 252, of which 0.2 is AF_INET/AF_INET6 for X over TCP; 8.2
# without the Protect*/RestrictNamespaces/filter set).
exposure=$(systemd-analyze security --offline=true "$tmp/unit/timeconvd.service" 2>/dev/null |
        sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
diag "systemd-analyze security: exposure ${exposure:-unknown}"
[ -n "$exposure" ] && awk -v e="$exposure" 'BEGIN { exit !(e <= 5.5) }'
ok $? "systemd-analyze security rates the unit's exposure at most 5.5 (${exposure:-unknown})"
sed '/^Protect\(KernelTunables\|KernelModules\|KernelLogs\|ControlGroups\|Hostname\)=/d; /^SystemCallFilter=/d; /^RestrictNamespaces=/d' \
        "$tmp/unit/timeconvd.service" > "$tmp/bad/timeconvd.service"
weak=$(systemd-analyze security --offline=true "$tmp/bad/timeconvd.service" 2>/dev/null |
        sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
[ -n "$weak" ] && awk -v e="$weak" 'BEGIN { exit !(e > 5.5) }'
ok $? "  and the check can fail: without those settings it is ${weak:-unknown}"

grep -qxF "ExecStart=$daemon" "$build_tree_unit"
ok $? "the build-tree unit starts $daemon"
# meson builds the daemon before the tests run: one that is not there is a failure too.
[ -x "$daemon" ] && verify "$build_tree_unit"
ok $? "the build-tree unit passes systemd-analyze --user verify ($daemon is built)"

activation="$build_tree_services/org.timeconv.Clock1.service"
[ "$(sed -n 's/^Name=//p' "$activation")" = "org.timeconv.Clock1" ]
ok $? "the activation file's Name= matches its file name"
grep -qxF "Exec=$daemon" "$activation"
ok $? "the build-tree activation file runs $daemon"
grep -qxF "SystemdService=timeconvd.service" "$activation_template"
ok $? "the activation file hands over to timeconvd.service"
[ "$(head -n 4 "$activation_template" | grep -c '^\[D-BUS Service\]$')" -eq 1 ]
ok $? "the activation file has its [D-BUS Service] group"

# A real dbus-daemon reads the activation file and lists the name as activatable.
cat > "$tmp/bus.conf" <<EOF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:dir=$tmp</listen>
  <servicedir>$build_tree_services</servicedir>
  <policy context="default">
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
    <allow own="*"/>
  </policy>
</busconfig>
EOF
# --nofork: the daemon stays our child, in our process group, and is stopped by its pid. The
# address comes through a FIFO: read returns once the bus listens (or at EOF when it dies).
mkfifo "$tmp/address"
dbus-daemon --config-file="$tmp/bus.conf" --nofork --print-address=3 \
        3>"$tmp/address" 2>"$tmp/dbus.log" &
dbus_pid=$!
read -r address < "$tmp/address" || address=
names=$(dbus-send --bus="$address" --print-reply --reply-timeout=10000 \
        --dest=org.freedesktop.DBus \
        /org/freedesktop/DBus org.freedesktop.DBus.ListActivatableNames 2>&1)
printf '%s\n' "$names" | grep -q '"org.timeconv.Clock1"'
rc=$?
ok $rc "dbus-daemon lists org.timeconv.Clock1 as activatable"
[ $rc -eq 0 ] || { printf '%s\n' "$names"; cat "$tmp/dbus.log"; } | diag

tap_done
