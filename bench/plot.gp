# SPDX-License-Identifier: MIT
# cw-bench's plot: per cell (driver model, kernel, CPU configuration), each
# strategy's added latency and CPU per launch over blocking's in the same
# cell, as two heat maps with the ratio written in each box, and under each
# cell the verdicts of its goals. cw-bench embeds this script at build time
# and sets these variables before it:
#   datafile   tab-separated, one row per (cell, strategy): cell index, cell
#              label, strategy index, strategy name, log2 of the latency
#              ratio, log2 of the CPU ratio, the two ratios as text
#   outfile    the PNG to write
#   ncells, nstrat  the grid's size
#   subtitle   a line under the title, subtitle2 one more
#   plotwidth  the image's width in pixels
# Standalone:
#   gnuplot -e "datafile='d.tsv'; outfile='o.png'; ncells=36; nstrat=9" bench/plot.gp
if (!exists("subtitle")) subtitle = ''
if (!exists("subtitle2")) subtitle2 = ''
if (!exists("plotwidth")) plotwidth = 1500

if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
    set terminal pngcairo size plotwidth,1250 font "Sans,10" noenhanced
} else {
    set terminal png size plotwidth,1250 font "Sans,10" noenhanced
}
set output outfile
set datafile separator "\t"
set datafile missing "NaN"

# log2 of the ratio: 1/8x to 8x, blue where the strategy is lower than
# blocking, white where equal, red where higher; beyond, the end colours.
set cbrange [-3:3]
set palette defined (-3 "#2166ac", -1 "#92c5de", 0 "#f7f7f7", 1 "#f4a582", 3 "#b2182b")
set cbtics ("1/8x" -3, "1/4x" -2, "1/2x" -1, "1x" 0, "2x" 1, "4x" 2, "8x" 3)
set xrange [-0.5:ncells - 0.5]
set yrange [nstrat - 0.5:-0.5]
set border 0
set tics scale 0
set lmargin 24
set rmargin 12

set multiplot title "cw-bench: each strategy against blocking (the driver's own wait), cell by cell\n".subtitle."\n".subtitle2 font ",13"

set size 1, 0.40
set origin 0, 0.53
set title "added latency (the wait's return after the command's end; medians) over blocking's" font ",12"
set format x ""
plot datafile using 1:3:5 with image notitle, \
     '' using 1:3:7 with labels font ",8" notitle, \
     '' using 1:3:ytic(4) with points ps 0 notitle

set size 1, 0.53
set origin 0, 0
set title "CPU per launch (means) over blocking's" font ",12"
set xtics rotate by -60 font ",9" offset 0,0
plot datafile using 1:3:6 with image notitle, \
     '' using 1:3:8 with labels font ",8" notitle, \
     '' using 1:3:ytic(4):xtic(2) with points ps 0 notitle

unset multiplot
