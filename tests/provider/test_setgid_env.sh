#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# A setgid program ignores gpursa's environment: GPURSA_METRICS_FILE (and
# every other GPURSA_* variable) comes from the less privileged caller, and
# honouring it would let the caller have a file created or replaced with the
# program's group. unload_exit signs once through gpursa with the variable
# set: run plainly the metrics file appears; run as a setgid copy it does
# not, and the signature is still made.
. "$(dirname "$0")/../lib.sh"
require_module
[ "$(id -u)" = 0 ] || skip "making a copy setgid to a group the caller is not in needs root"
# A group the caller is not in: nogroup if so, else the first such in /etc/group.
mine=" $(id -G) "
grp=
for g in nogroup nobody $(cut -d: -f1 /etc/group); do
    gid=$(getent group "$g" | cut -d: -f3)
    [ -n "$gid" ] || continue
    case $mine in *" $gid "*) continue ;; esac
    grp=$g
    break
done
[ -n "$grp" ] || skip "no group the caller is not in"
# In the build tree, not /tmp: a nosuid /tmp would make the setgid bit void.
T=$(mktemp -d "$PWD/test_setgid_env.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT
chmod 755 "$T"
if findmnt -no OPTIONS -T "$T" 2>/dev/null | tr ',' '\n' | grep -qx nosuid; then
    skip "$T is on a nosuid filesystem"
fi
cp ./unload_exit "$T/plain" && cp ./unload_exit "$T/sgid" || exit 99
chgrp "$grp" "$T/sgid" && chmod 2755 "$T/sgid" || exit 99
failures=0

GPURSA_METRICS_FILE=$T/plain.prom "$T/plain" "$OPENSSL_MODULES" >"$T/plain.out" 2>&1
rc=$?
if [ $rc -ne 0 ] || ! grep -q '^signed' "$T/plain.out"; then
    echo "FAIL: the plain run did not sign (exit $rc):"; cat "$T/plain.out"
    failures=$((failures + 1))
elif [ ! -s "$T/plain.prom" ]; then
    echo "FAIL: the plain run did not write GPURSA_METRICS_FILE (the control)"
    failures=$((failures + 1))
else
    echo "ok: plain run signs and writes the metrics file"
fi

# LeakSanitizer cannot stop the threads of a setgid (non-dumpable) process.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
    GPURSA_METRICS_FILE=$T/sgid.prom "$T/sgid" "$OPENSSL_MODULES" >"$T/sgid.out" 2>&1
rc=$?
if [ $rc -ne 0 ] || ! grep -q '^signed' "$T/sgid.out"; then
    echo "FAIL: the setgid ($grp) run did not sign (exit $rc):"; cat "$T/sgid.out"
    failures=$((failures + 1))
fi
if [ -e "$T/sgid.prom" ] || ls "$T" | grep -q '^sgid\.prom'; then
    echo "FAIL: the setgid ($grp) run honoured GPURSA_METRICS_FILE:"; ls -l "$T"
    failures=$((failures + 1))
else
    echo "ok: setgid ($grp) run ignores GPURSA_METRICS_FILE"
fi
[ $failures -eq 0 ]
