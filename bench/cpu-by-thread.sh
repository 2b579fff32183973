#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bench/cpu-by-thread.sh PID SECONDS [DELAY] - where a running process's CPU goes, by thread name.
# Waits DELAY seconds (default 0), reads every thread's utime+stime (/proc/PID/task/*/stat)
# and the machine's /proc/stat, again SECONDS later, and prints the cores each thread name
# used (gpursa's threads are gpursa-disp, gpursa-run, gpursa-cpu; CUDA's cuda-*; the
# application's keep its name) and the machine's busy cores over the same interval.
pid=${1:?usage: cpu-by-thread.sh PID SECONDS [DELAY]} secs=${2:?seconds} delay=${3:-0}
sleep "$delay"
snap() {   # "name ticks" per thread, then "machine busy total"
    for t in /proc/"$pid"/task/*; do
        [ -r "$t/stat" ] || continue
        # comm may contain spaces: take the fields after the last ')'
        awk '{ s = $0; sub(/.*\) /, "", s); split(s, f, " "); print f[12] + f[13] }' "$t/stat" |
            { read -r ticks; echo "$(cat "$t/comm" 2>/dev/null | tr ' ' '_') ${ticks:-0}"; }
    done
    awk '/^cpu / { t = 0; for (i = 2; i <= NF; i++) t += $i; print "MACHINE", t - $5 - $6, t }' /proc/stat
}
a=$(snap); sleep "$secs"; b=$(snap)
hz=$(getconf CLK_TCK)
{ echo "$a" | sed 's/^/A /'; echo "$b" | sed 's/^/B /'; } | awk -v hz="$hz" -v secs="$secs" -v ncpu="$(nproc)" '
    $2 == "MACHINE" { if ($1 == "A") { mb = -$3; mt = -$4 } else { mb += $3; mt += $4 }; next }
    { v[$2] += ($1 == "A" ? -$3 : $3) }
    END {
        for (n in v) printf "%-20s %6.2f cores\n", n, v[n] / hz / secs
        if (mt > 0) printf "%-20s %6.2f of %d cores busy\n", "machine", mb / mt * ncpu, ncpu
    }' | sort -k2 -nr
