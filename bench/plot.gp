# cw-bench's plot: mean CPU time and mean wall time per launch, by strategy,
# for every (kernel, CPU configuration). cw-bench embeds this script at build
# time and sets these variables before it:
#   datafile  tab-separated, one row per (kernel, config): a label, then
#             nstrat mean-CPU columns, then nstrat mean-wall columns (us)
#   outfile   the PNG to write
#   nstrat    the number of strategies
#   subtitle  a line under the title
# Standalone:
#   gnuplot -e "datafile='d.tsv'; outfile='o.png'; nstrat=6" bench/plot.gp
if (!exists("subtitle")) subtitle = ''

if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
    set terminal pngcairo size 1500,1100 font "Sans,11" noenhanced
} else {
    set terminal png size 1500,1100 font "Sans,11" noenhanced
}
set output outfile

set datafile separator "\t"
set datafile missing "NaN"
# The first row holds the column names: a header for every plot below.
set key autotitle columnhead
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.9 border rgb "#404040"
set boxwidth 1
set logscale y
set format y "%g"
set grid ytics mytics lc rgb "#d0d0d0"
set xtics nomirror scale 0 font ",12"
set ytics nomirror
set border 3
set key outside right top vertical Left reverse samplen 2 spacing 1.3 font ",12"
set lmargin 10
set rmargin 30

# One colour per strategy, the same in both panels (blocking first).
array colors[8] = ["#4c72b0", "#55a868", "#dd8452", "#c44e52", "#8172b3", "#937860", "#da8bc3", "#8c8c8c"]

# Centre of bar j (0-based) of the cluster in row r: clusters sit at x = r,
# each bar 1/(nstrat + gap) wide with gap = 1.
barx(r, j) = r + (j - (nstrat - 1) / 2.0) / (nstrat + 1.0)

set multiplot layout 2,1 title "cw-bench: wait strategies compared (mean per launch; log scale)\n".subtitle font ",14"

set title "launching thread's CPU time per launch (mean, us)" font ",13"
set ylabel "CPU us per launch (log)"
plot for [i=2:nstrat+1] datafile using i:xtic(1) title columnheader(i) lc rgb colors[(i-2)%8+1], \
     for [i=2:nstrat+1] datafile using (barx($0, i-2)):(column(i)):(sprintf("%.0f", column(i))) \
         with labels rotate by 90 left offset 0,0.4 font ",9" notitle

unset key
set title "wall time per launch, enqueue + wait (mean, us)" font ",13"
set ylabel "wall us per launch (log)"
plot for [i=nstrat+2:2*nstrat+1] datafile using i:xtic(1) notitle lc rgb colors[(i-nstrat-2)%8+1], \
     for [i=nstrat+2:2*nstrat+1] datafile using (barx($0, i-nstrat-2)):(column(i)):(sprintf("%.0f", column(i))) \
         with labels rotate by 90 left offset 0,0.4 font ",9" notitle

unset multiplot
