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

# Paper 000 (bench/paper000.c): sliced filters, windows, dynamic size, Bloom trees.
gnuplot <<GP
set terminal pngcairo size 1100,460 noenhanced
set output "$out/p000_fig1.png"
set multiplot layout 1,2 title "Fault tolerance, k=4, S=40 (paper 000 Fig. 1)"
set title "(a) false-positive rate, failed positions counted as set"
set xlabel "failed fraction of the sites"
set ylabel "false-positive rate"
set key left top
plot "$out/p000_fig1a.dat" using 1:2 with lines lw 2 lc 1 title "horizontal, Eq. 5", \
     "$out/p000_fig1a.dat" using 1:3 with lines lw 2 lc 2 title "vertical, Eq. 6", \
     "$out/p000_fig1a_measured.dat" using 1:2 with points pt 7 lc 1 title "horizontal, measured", \
     "$out/p000_fig1a_measured.dat" using 1:3 with points pt 5 lc 2 title "vertical, measured"
set title "(b) slices S_f needed for P_max with f failed"
set xlabel "failed sites f"
set ylabel "S_f"
set logscale y
plot for [p=0:2] "$out/p000_fig1b.dat" using 1:(column(2+2*p) > 0 ? column(2+2*p) : 1/0) \
       with linespoints lw 2 lc p+1 pt 7 title "horizontal, P_max ".word("0.10 0.15 0.20", p+1), \
     for [p=0:2] "$out/p000_fig1b.dat" using 1:(column(3+2*p) > 0 ? column(3+2*p) : 1/0) \
       with linespoints lw 2 lc p+1 dt 2 pt 5 title "vertical, P_max ".word("0.10 0.15 0.20", p+1)
unset multiplot
unset logscale y

set terminal pngcairo size 1400,460 noenhanced
set output "$out/p000_fig5a.png"
set multiplot layout 1,3 title "Final false-positive rate against slices, Zipf stream, k=4 (paper 000 Fig. 5(a)): points measured, lines formula"
set logscale x 2
set xlabel "slices S"
set ylabel "false-positive rate"
set key left bottom
do for [t=0:2] {
  set title "target ".word("0.02 0.05 0.08", t+1)
  plot for [i=0:3] "$out/p000_fig5.dat" using 1:(column(2+8*t+2*i)) with points pt 7 lc i+1 \
         title word("horizontal vertical h-v v-h", i+1), \
       for [i=0:3] "$out/p000_fig5.dat" using 1:(column(3+8*t+2*i)) with lines lc i+1 notitle
}
unset multiplot

set terminal pngcairo size 1100,460 noenhanced
set output "$out/p000_fig5bc.png"
set multiplot layout 1,2 title "Load over the sites, Zipf stream; diced slicings have 2S sites (paper 000 Figs. 5(b), 5(c))"
set title "(b) fairness"
set ylabel "fairness"
set key left bottom
plot for [i=0:3] "$out/p000_fig5.dat" using 1:(column(26+i)) with linespoints lw 2 pt 7 \
       title word("horizontal vertical h-v v-h", i+1)
set title "(c) largest share of the load"
set ylabel "max share"
set logscale y
set key right top
plot for [i=0:3] "$out/p000_fig5.dat" using 1:(column(30+i)) with linespoints lw 2 pt 7 \
       title word("horizontal vertical h-v v-h", i+1), \
     "$out/p000_fig5.dat" using 1:34 with lines dt 2 lc rgb "black" title "1/S"
unset multiplot
unset logscale

set terminal pngcairo size 900,540 noenhanced
set output "$out/p000_fig5d.png"
set title "Threshold heuristic, vertical, k=8, 8 of 40 sites failed (paper 000 Fig. 5(d))"
set xlabel "threshold x"
set ylabel "rate"
set key left center
plot "$out/p000_fig5d.dat" using 1:2 with points pt 7 lc 1 title "FP measured", \
     "$out/p000_fig5d.dat" using 1:3 with lines lw 2 lc 1 title "FP formula", \
     "$out/p000_fig5d.dat" using 1:4 with points pt 5 lc 2 title "FN measured", \
     "$out/p000_fig5d.dat" using 1:5 with lines lw 2 lc 2 title "FN formula"

set output "$out/p000_fig7c.png"
set title "Slices accessed per lookup, vertical, k=4, S=16 (paper 000 Fig. 7(c))"
set xlabel "share of distinct events"
set ylabel "TEST requests per event"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.7 border -1
set yrange [0:*]
set key left top
plot "$out/p000_fig7c.dat" using 3:xtic(sprintf("%.0f%%", column(2)*100)) title "parallel", \
     "" using 4 title "pipelined"
set style data lines
set yrange [*:*]

set terminal pngcairo size 1100,800 noenhanced
set output "$out/p000_fig9.png"
set multiplot layout 2,2 title "Equal timers, k=8, S=8, window 5000 (paper 000 Fig. 9)"
set xlabel "equal timers among the 8"
set ylabel "duplicates answered (heuristic off)"
set logscale y
set key right top
set title "(a) horizontal"
plot "$out/p000_fig9ab.dat" using 1:(column(2) > 0 ? column(2) : 1/0) with linespoints pt 7 lw 2 title "true duplicates", \
     "$out/p000_fig9ab.dat" using 1:(column(3) > 0 ? column(3) : 1/0) with linespoints pt 5 lw 2 title "false positives"
set title "(b) vertical"
plot "$out/p000_fig9ab.dat" using 1:(column(4) > 0 ? column(4) : 1/0) with linespoints pt 7 lw 2 title "true duplicates", \
     "$out/p000_fig9ab.dat" using 1:(column(5) > 0 ? column(5) : 1/0) with linespoints pt 5 lw 2 title "false positives"
set xlabel "k' (equal timers required)"
set title "(c) false-positive rate"
set ylabel "FP rate"
plot "$out/p000_fig9.dat" using 0:(column(2) > 0 ? column(2) : 1/0):xtic(column(1) == 0 ? "off" : sprintf("%d", column(1))) with linespoints pt 7 lw 2 title "horizontal", \
     "$out/p000_fig9.dat" using 0:(column(4) > 0 ? column(4) : 1/0) with linespoints pt 5 lw 2 title "vertical"
unset logscale y
set title "(d) false-negative rate"
set ylabel "FN rate"
set key left top
plot "$out/p000_fig9.dat" using 0:3:xtic(column(1) == 0 ? "off" : sprintf("%d", column(1))) with linespoints pt 7 lw 2 title "horizontal", \
     "$out/p000_fig9.dat" using 0:5 with linespoints pt 5 lw 2 title "vertical"
unset multiplot

set terminal pngcairo size 1400,800 noenhanced
set output "$out/p000_fig10.png"
set multiplot layout 2,3 title "Sub-filters over 4 sites, bursts in units 2000-4000 (paper 000 Fig. 10)"
set xlabel "time unit"
set ylabel "sub-filters"
set key left top
set xtics 1000
set yrange [0:24]
do for [g=0:1] {
  do for [w=0:2] {
    set title word("density cardinality", g+1).", window ".word("100 500 1000", w+1)
    plot for [sl=0:1] for [b=0:1] "$out/p000_fig10.dat" using 1:(column(2 + ((g*2 + sl)*3 + w)*2 + b)) \
         with steps lw 2 dt sl+1 lc b+1 \
         title word("horizontal vertical", sl+1)." ".word("2x 5x", b+1)
  }
}
unset multiplot

set output "$out/p000_fig11.png"
set multiplot layout 2,3 title "False-positive rate over time, target 0.01, 200-unit buckets (paper 000 Fig. 11)"
set ylabel "FP rate"
set logscale y
set yrange [*:*]
do for [g=0:1] {
  do for [w=0:2] {
    set title word("density cardinality", g+1).", window ".word("100 500 1000", w+1)
    plot for [sl=0:1] for [b=0:1] "$out/p000_fig11.dat" using 1:(column(2 + ((g*2 + sl)*3 + w)*2 + b) > 0 ? column(2 + ((g*2 + sl)*3 + w)*2 + b) : 1/0) \
         with linespoints pt 7 ps 0.5 lw 2 dt sl+1 lc b+1 \
         title word("horizontal vertical", sl+1)." ".word("2x 5x", b+1), \
         0.01 with lines lc rgb "black" dt 3 notitle
  }
}
unset multiplot
unset logscale y
set xtics autofreq

set terminal pngcairo size 1400,460 noenhanced
set output "$out/p000_fig12.png"
set multiplot layout 1,3 title "Bloom tree of 5 levels, fanout 2 (paper 000 Fig. 12)"
set xlabel "level (0 = root)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.7 border -1
set key right top
set title "(a) events resolved at each level"
set ylabel "events"
plot "$out/p000_fig12.dat" index 1 using 2:xtic(1) title "dense", "" index 1 using 3 title "sparse"
set title "(b) accesses per level"
set ylabel "accesses"
plot "$out/p000_fig12.dat" index 1 using 4:xtic(1) title "dense", "" index 1 using 5 title "sparse"
set style data lines
set title "(c) false positives against top-down level d"
set xlabel "d (0: off)"
set xtics 1
set ylabel "FP rate"
set key right top
plot "$out/p000_fig12.dat" index 3 using 1:2 with linespoints pt 7 lw 2 title "dense, 5 levels", \
     "$out/p000_fig12.dat" index 3 using 1:3 with linespoints pt 5 lw 2 dt 2 title "sparse, 5 levels", \
     "$out/p000_fig12.dat" index 2 using 1:2 with linespoints pt 9 lw 2 title "dense, 2 levels", \
     "$out/p000_fig12.dat" index 2 using 1:3 with linespoints pt 11 lw 2 dt 2 title "sparse, 2 levels"
unset multiplot
GP
echo "wrote $out"
