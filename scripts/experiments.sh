#!/usr/bin/env bash
# make experiments: regenerate docs/experiments/ (tables as Markdown, data, PNG plots).
# Usage: scripts/experiments.sh BUILD_DIR
set -euo pipefail
build=$1
out=docs/experiments
mkdir -p "$out"
"$build/bench/once-experiments" "$out"
"$build/bench/once-card-experiments" "$out"

gnuplot <<GP
set terminal pngcairo size 900,540 noenhanced
set output "$out/apbf_fig6.png"
set title "APBF false-positive rate vs insertions (window 1000; paper 001 Fig. 6)"
set xlabel "distinct insertions"
set ylabel "false-positive rate"
set logscale y
set key outside right
plot "$out/apbf_fig6.dat" using 1:2 with lines lw 2 title "k=4 l=3 (p 0.1)", \
     "$out/apbf_fig6.dat" using 1:3 with lines lw 2 title "k=7 l=5 (p 0.01)", \
     "$out/apbf_fig6.dat" using 1:4 with lines lw 2 title "k=10 l=7 (p 0.001)", \
     "$out/apbf_fig6.dat" using 1:5 with lines lw 2 title "k=14 l=11 (p 0.0001)"

set output "$out/tlbf_slices.png"
unset logscale y
set title "TLBF slices over time: 1/s for 3 h, then 5/s (span 1 h; paper 004 Fig. 1)"
set xlabel "minute"
set ylabel "slices"
plot "$out/tlbf_fig12.dat" using 1:2 with lines lw 2 title "start 10x under", \
     "$out/tlbf_fig12.dat" using 1:4 with lines lw 2 title "start 10x over"

set output "$out/tlbf_newest_slice.png"
set title "TLBF newest-slice size over time (paper 004 Fig. 2)"
set ylabel "bits"
set logscale y
plot "$out/tlbf_fig12.dat" using 1:3 with lines lw 2 title "start 10x under", \
     "$out/tlbf_fig12.dat" using 1:5 with lines lw 2 title "start 10x over"

set output "$out/tlbf_fpr.png"
unset logscale y
set title "TLBF measured false-positive rate (target 0.01)"
set ylabel "false-positive rate"
plot "$out/tlbf_fig12.dat" using 1:6 with lines lw 2 title "start 10x under", \
     "$out/tlbf_fig12.dat" using 1:7 with lines lw 2 title "start 10x over", \
     0.01 with lines dt 2 title "target"

set output "$out/card_fig5.png"
unset logscale y
set title "Estimated vs true distinct keys, 2 hashes, with 70% and 90% bounds (paper 002 Fig. 5)"
set xlabel "true distinct keys"
set ylabel "estimate"
set key left top
plot "$out/card_fig5.dat" index 0 using 2:3 with points pt 7 ps 0.4 title "8 Kbit estimates", \
     "$out/card_fig5.dat" index 0 using 2:6 with lines dt 2 title "8 Kbit 90% low", \
     "$out/card_fig5.dat" index 0 using 2:7 with lines dt 2 title "8 Kbit 90% high", \
     "$out/card_fig5.dat" index 1 using 2:3 with points pt 7 ps 0.4 title "32 Kbit estimates", \
     "$out/card_fig5.dat" index 1 using 2:6 with lines dt 3 title "32 Kbit 90% low", \
     "$out/card_fig5.dat" index 1 using 2:7 with lines dt 3 title "32 Kbit 90% high", \
     x with lines lc rgb "black" title "true"
set datafile missing "-"
set output "$out/dbf_fig5.png"
set title "DBF vs a one-row standard filter, m=1280 k=7 c=133 (paper 003 Figs. 1, 5)"
set xlabel "keys n"
set ylabel "false-positive rate"
set logscale y
set yrange [1e-6:1.5]
set key right bottom
plot "$out/dbf_fig5.dat" using 1:2 with points pt 7 ps 0.6 title "DBF measured", \
     "$out/dbf_fig5.dat" using 1:3 with lines lw 2 title "DBF Eq. 3", \
     "$out/dbf_fig5.dat" using 1:4 with points pt 5 ps 0.6 title "standard measured", \
     "$out/dbf_fig5.dat" using 1:5 with lines lw 2 title "standard Eq. 1", \
     "$out/dbf_fig5.dat" using 1:6 with linespoints pt 9 title "several addresses", \
     "$out/dbf_fig5.dat" using 1:7 with lines dt 2 title "f2 (Eq. 10)", \
     "$out/dbf_fig5.dat" using 1:8 with linespoints pt 11 title "real r"
GP
echo "wrote $out"
