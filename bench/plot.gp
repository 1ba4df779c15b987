# SPDX-License-Identifier: MIT
# cw-bench's plot: mean CPU time and mean wall time per launch, by strategy,
# for every (kernel, CPU configuration). cw-bench embeds this script at build
# time and sets these variables before it:
#   datafile   tab-separated, one row per (kernel, config): a label, then
#              nstrat mean-CPU columns, nstrat mean-wall columns (us), and
#              the config's floor (median one-way futex wake, us)
#   outfile    the PNG to write
#   nstrat     the number of strategies
#   strat_ids  each column's cw_strategy value, space-separated, so that a
#              strategy has the same colour and marker in every run
#   subtitle   a line under the title, subtitle2 one more
#   plotwidth  the image's width in pixels (rows = kernels x configs x models)
# Standalone:
#   gnuplot -e "datafile='d.tsv'; outfile='o.png'; nstrat=9; strat_ids='1 2 3 4 5 6 7 8 9'" bench/plot.gp
if (!exists("subtitle")) subtitle = ''
if (!exists("subtitle2")) subtitle2 = ''
if (!exists("strat_ids")) strat_ids = ''
if (!exists("plotwidth")) plotwidth = 1500

if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
    set terminal pngcairo size plotwidth,1100 font "Sans,11" noenhanced
} else {
    set terminal png size plotwidth,1100 font "Sans,11" noenhanced
}
set output outfile

set datafile separator "\t"
set datafile missing "NaN"
# The first row holds the column names: a header for every plot below.
set key autotitle columnhead
set logscale y
set format y "%g"
set grid xtics ytics mytics lc rgb "#d0d0d0"
set xtics nomirror scale 0 font ",12" rotate by -30
set ytics nomirror
set border 3
set key outside right top vertical Left reverse samplen 1 spacing 1.3 font ",12"
set lmargin 10
set rmargin 30
set pointsize 1.6

# One colour and one marker per strategy, indexed by its cw_strategy value
# (default = 0, blocking = 1, ..., auto = 9): no two strategies share either.
array colors[10] = ["#000000", "#1f77b4", "#2ca02c", "#d62728", "#ff7f0e", "#9467bd", \
                    "#8c564b", "#e377c2", "#17becf", "#bcbd22"]
array markers[10] = [3, 5, 7, 9, 11, 13, 15, 4, 6, 8]
sid(j) = (words(strat_ids) >= j + 1) ? int(word(strat_ids, j + 1)) : j + 1
col(j) = colors[sid(j) % 10 + 1]
mk(j) = markers[sid(j) % 10 + 1]

# Rows sit at x = 0, 1, ...; strategy j (0-based) is offset within its row so
# the markers do not hide one another.
stats datafile using 0 nooutput
nrows = STATS_records
set xrange [-0.5:nrows - 0.5]
dx(j) = (j - (nstrat - 1) / 2.0) * 0.6 / nstrat

set multiplot layout 2,1 title "cw-bench: wait strategies compared (mean per launch; log scale)\n".subtitle."\n".subtitle2 font ",14"

set title "launching thread's CPU time per launch (mean, us)" font ",13"
set ylabel "CPU us per launch (log)"
plot datafile using 0:(column(2)):xtic(1) with points pt 0 ps 0 lc rgb "#ffffff" notitle, \
     for [i=2:nstrat+1] datafile using ($0 + dx(i-2)):(column(i)) with points \
         pt mk(i-2) lc rgb col(i-2) title columnheader(i)

set title "wall time per launch, enqueue + wait (mean, us)" font ",13"
set ylabel "wall us per launch (log)"
plot datafile using 0:(column(2)):xtic(1) with points pt 0 ps 0 lc rgb "#ffffff" notitle, \
     for [i=nstrat+2:2*nstrat+1] datafile using ($0 + dx(i-nstrat-2)):(column(i)) with points \
         pt mk(i-nstrat-2) lc rgb col(i-nstrat-2) notitle, \
     datafile using 0:(column(2*nstrat+2)):(0.4) with xerrorbars pt 0 lw 2 lc rgb "#000000" \
         title "floor: futex wake, one way (median)"

unset multiplot
