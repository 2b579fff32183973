#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# openssl speed through gpursa on the host backend with 64 async jobs must
# form batches larger than one (the stats line printed at unload shows it).
: "${OPENSSL:=openssl}"
: "${OPENSSL_MODULES:?run from make check}"
test -f "$OPENSSL_MODULES/gpursa.so" || { echo "SKIP: module not built"; exit 77; }
log=${TMPDIR:-/tmp}/gpursa-speed-$$.log
trap 'rm -f "$log"' EXIT
GPURSA_BACKEND=host GPURSA_STATS=1 GPURSA_MIN_GPU_BATCH=-1 \
  "$OPENSSL" speed -seconds 2 -provider gpursa -provider default \
  -propquery provider=gpursa -async_jobs 64 rsa2048 >"$log" 2>&1
rc=$?
cat "$log"
test $rc -eq 0 || { echo "FAIL: openssl speed exited $rc"; exit 1; }
line=$(grep 'gpursa' "$log" | grep -i 'batch' | tail -n 1)
test -n "$line" || { echo "FAIL: no gpursa stats line"; exit 1; }
# The stats line carries batches=N and batch_items=M (or a mean): accept either form.
batches=$(printf '%s\n' "$line" | sed -n 's/.*batches[=: ]*\([0-9][0-9]*\).*/\1/p')
items=$(printf '%s\n' "$line" | sed -n 's/.*batch_items[=: ]*\([0-9][0-9]*\).*/\1/p')
mean=$(printf '%s\n' "$line" | sed -n 's/.*mean[_ a-z]*[=: ]*\([0-9][0-9.]*\).*/\1/p')
if [ -n "$batches" ] && [ -n "$items" ] && [ "$batches" -gt 0 ]; then
  [ "$items" -gt "$batches" ] || { echo "FAIL: batches=$batches items=$items"; exit 1; }
elif [ -n "$mean" ]; then
  awk -v m="$mean" 'BEGIN { exit !(m > 1.0) }' || { echo "FAIL: mean batch $mean"; exit 1; }
else
  echo "FAIL: cannot read the batch figures from: $line"; exit 1
fi
echo "PASS: $line"
