# SPDX-License-Identifier: Apache-2.0
# gnuplot -e "csv='bench.csv'; png='batch.png'" bench/plot-batch.gp
# Throughput against batch size per (size, variant) from gpursa-bench CSV, the
# gnuplot twin of plot-batch.py. Columns: 4 variant, 5 bits, 6 batch, 10 ops/s.
# With -e "variants='all'" one line per size whatever the variant column
# says (a sweep of one tree, whose variant names its commit and call);
# title="..." sets the plot's title, sizes="2048 3072 4096" the key sizes.
if (!exists("variants")) variants = "imad xmad fast"
if (!exists("title")) title = "gpursa throughput against batch size"
if (!exists("sizes")) sizes = "1024 2048 3072 4096"
set terminal pngcairo size 990,660
set output png
set datafile separator ","
set logscale x 2
set logscale y
set xlabel "batch size (private operations)"
set ylabel "private operations / s (copies included, every result verified)"
set title title noenhanced
set key left top
set grid
plot for [s in sizes] for [v in variants] \
    csv using ((strcol(5) eq s && (v eq "all" || strcol(4) eq v)) ? $6 : NaN):10 every ::1 \
    with linespoints pt 7 ps 0.5 noenhanced title (v eq "all" ? sprintf("RSA-%s", s) : sprintf("RSA-%s %s", s, v))
