#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# openssl speed through gpursa on the host backend with 64 async jobs must
# form batches larger than one (the stats line printed at unload shows it).
. "$(dirname "$0")/../lib.sh"
require_module
make_tmp
rc=0
GPURSA_BACKEND=host GPURSA_STATS=1 GPURSA_MIN_GPU_BATCH=-1 \
  "$OPENSSL" speed -seconds 2 -provider gpursa -provider default \
  -propquery provider=gpursa -async_jobs 64 rsa2048 >"$TMP/out" 2>"$TMP/err" || rc=$?
cat "$TMP/out" "$TMP/err"
[ $rc -eq 0 ] || fail "openssl speed exited $rc"
read -r gpu host _ batches <<STATS
$(stats_lines "$TMP/err" | tail -n 1)
STATS
[ -n "$batches" ] || fail "no gpursa stats line"
items=$((gpu + host))
[ "$batches" -gt 0 ] || fail "no batches"
[ "$items" -gt "$batches" ] || fail "batches=$batches items=$items: no batch of more than one"
pass "$(grep '^gpursa: ops' "$TMP/err")"
