#!/usr/bin/env bash
# make experiments: regenerate docs/experiments/ (tables as Markdown, data, PNG plots).
# Usage: scripts/experiments.sh BUILD_DIR
set -euo pipefail
build=$1
out=docs/experiments
mkdir -p "$out"
"$build/bench/once-experiments" "$out"

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

set output "$out/bpbf_fig1.png"
set title "Reducing a filter's length: 100000 keys (paper 002 Fig. 1)"
set xlabel "reduced length (Kbits)"
set ylabel "false-positive rate"
set logscale x 2
set logscale y
set yrange [1e-10:1.5]
set format y "%.0e"
set key inside bottom right
plot "$out/bpbf_fig1.dat" using 1:(\$2 > 0 ? \$2 : 1/0) with linespoints lw 2 title "BPBF, 64 x 128 Kbits, measured", \
     "$out/bpbf_fig1.dat" using 1:4 with linespoints lw 2 title "standard k=60 folded (mod), measured", \
     "$out/bpbf_fig1.dat" using 1:3 with lines dt 3 lw 1 title "BPBF, Eq. 1", \
     "$out/bpbf_fig1.dat" using 1:5 with lines dt 3 lw 1 title "folded, section 3.1 formula", \
     "$out/bpbf_fig1.dat" using 1:6 with lines dt 2 lw 2 title "optimal standard filter"

set output "$out/dbpbf_fig4.png"
set terminal pngcairo size 1100,800 noenhanced
unset logscale x
unset logscale y
set format y "%g"
set yrange [0:1]
set xtics 100000
set key inside top left
set xlabel "set cardinality"
set ylabel "false-positive rate"
set multiplot layout 2,2 title "D-BBF vs standard filter, both for 100000 keys (paper 002 Fig. 4)"
do for [t=0:3] {
  p = word("0.1 0.05 0.01 0.005", t+1)
  set title "initial target ".p
  plot "$out/dbpbf_fig4.dat" using 1:(column(2+3*t)) with linespoints lw 2 title "D-BBF (reduced)", \
       "$out/dbpbf_fig4.dat" using 1:(column(3+3*t)) with linespoints lw 2 title "standard filter"
}
unset multiplot
GP
echo "wrote $out"
