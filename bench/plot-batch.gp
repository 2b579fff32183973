# gnuplot -e "csv='bench.csv'; png='batch.png'" bench/plot-batch.gp
# Throughput against batch size per (size, variant) from gpursa-bench CSV, the
# gnuplot twin of plot-batch.py. Columns: 4 variant, 5 bits, 6 batch, 10 ops/s.
set terminal pngcairo size 900,600
set output png
set datafile separator ","
set logscale xy
set xlabel "batch size (private operations)"
set ylabel "private operations / s"
set key left top
set grid
sizes = "1024 2048 3072 4096"
variants = "imad xmad fast"
plot for [s in sizes] for [v in variants] \
    csv using ((strcol(5) eq s && strcol(4) eq v) ? $6 : NaN):10 every ::1 \
    with linespoints title sprintf("RSA-%s %s", s, v)
