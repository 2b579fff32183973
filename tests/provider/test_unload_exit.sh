#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The process exits cleanly after signing through gpursa's queue and unloading the
# provider (unload_exit.c says why); with the host backend, so that the queue starts.
prog=./unload_exit
[ -x "$prog" ] || { echo "unload_exit not built"; exit 77; }
GPURSA_BACKEND=host GPURSA_MIN_GPU_BATCH=1 "$prog"
rc=$?
[ $rc -eq 0 ] || { echo "unload_exit: exit status $rc (0 expected)"; exit 1; }
echo "ok: signed, unloaded, exited cleanly"
