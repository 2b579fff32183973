#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Plot gpursa-bench CSV: full private operations per second against batch
size, one line per (key size, variant), log-log, to PNG.

    python3 bench/plot-batch.py bench.csv batch.png

Needs matplotlib (present on the GPU machine's image); bench/plot-batch.gp
does the same with gnuplot."""
import csv
import sys
from collections import defaultdict

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    series = defaultdict(list)
    cpu = {}
    device = ""
    with open(sys.argv[1], newline="") as f:
        for row in csv.DictReader(f):
            key = (int(row["bits"]), row["variant"])
            series[key].append((int(row["batch"]), float(row["ops_per_s"])))
            if float(row["cpu_ops_per_s"]) > 0:
                cpu[int(row["bits"])] = float(row["cpu_ops_per_s"])
            device = row["device"].split(" variant")[0].rstrip("; ")
    fig, ax = plt.subplots(figsize=(9, 6))
    for (bits, variant), pts in sorted(series.items()):
        pts.sort()
        if len(pts) < 2:
            continue
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3,
                label=f"RSA-{bits} {variant}")
    for bits, rate in sorted(cpu.items()):
        ax.axhline(rate, ls=":", lw=1, color="grey")
        ax.text(1.1, rate * 1.05, f"default provider, all cores, RSA-{bits}", fontsize=7, color="grey")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("batch size (private operations)")
    ax.set_ylabel("private operations / s (copies included, every result verified)")
    ax.set_title(f"gpursa throughput against batch size\n{device}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)


if __name__ == "__main__":
    main()
