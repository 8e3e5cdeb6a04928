$c1 << EOD
1 78.934 77.513357 80.354643
2 83.631 83.0901478 84.1718522
3 84.731 84.1613325 85.3006675
4 85.937 85.5150982 86.3589018
5 87.101 86.7238042 87.4781958
6 87.379 87.0248045 87.7331955
7 88.044 87.704484 88.383516
8 88.445 88.1148065 88.7751935
9 88.611 88.398792 88.823208
10 88.658 88.4401417 88.8758583
EOD
$c2 << EOD
1 79.512 79.2042339 79.8197661
2 83.458 82.5525609 84.3634391
3 85.04 84.7331613 85.3468387
4 85.9 85.5887927 86.2112073
5 86.886 86.6230742 87.1489258
6 87.026 86.6222922 87.4297078
7 87.88 87.6011631 88.1588369
8 88.238 88.0062242 88.4697758
9 88.372 88.1175987 88.6264013
10 88.484 88.2136669 88.7543331
EOD
$c3 << EOD
1 80.17 79.5496372 80.7903628
2 83.818 82.9097765 84.7262235
3 85.098 84.3732449 85.8227551
4 85.846 85.1228956 86.5691044
5 87.176 87.0222795 87.3297205
6 87.526 87.2416938 87.8103062
7 88.152 88.0202047 88.2837953
8 88.504 88.3697242 88.6382758
9 88.746 88.6456008 88.8463992
10 88.814 88.7485783 88.8794217
EOD
$c4 << EOD
1 80.16 79.3855324 80.9344676
2 83.896 82.6350559 85.1569441
3 85.13 84.6579831 85.6020169
4 86.1 85.6188036 86.5811964
5 87.314 87.0429281 87.5850719
6 87.45 86.9351699 87.9648301
7 88.172 87.9143762 88.4296238
8 88.424 88.2357714 88.6122286
9 88.638 88.4281906 88.8478094
10 88.722 88.5119524 88.9320476
EOD
$c5 << EOD
1 79.627 78.8937265 80.3602735
2 83.763 83.3589084 84.1670916
3 84.845 84.0941745 85.5958255
4 86.053 85.6254475 86.4805525
5 86.803 86.4985497 87.1074503
6 87.188 86.8453697 87.5306303
7 87.84 87.4982399 88.1817601
8 88.069 87.8339846 88.3040154
9 88.229 88.0366779 88.4213221
10 88.307 88.1135489 88.5004511
EOD
$c6 << EOD
1 79.27 78.6891386 79.8508614
2 83.768 83.0784567 84.4575433
3 84.794 84.3261004 85.2618996
4 85.884 85.2002749 86.5677251
5 86.96 86.7929671 87.1270329
6 87.272 87.0453505 87.4986495
7 87.886 87.5852842 88.1867158
8 88.238 88.1108387 88.3651613
9 88.4 88.2468661 88.5531339
10 88.466 88.2950322 88.6369678
EOD
$c7 << EOD
1 79.74 78.8419465 80.6380535
2 83.9 83.0723829 84.7276171
3 85.052 84.6586554 85.4453446
4 85.762 85.0834943 86.4405057
5 87.242 86.7746992 87.7093008
6 87.342 86.7971881 87.8868119
7 88.066 87.8427737 88.2892263
8 88.444 88.1119157 88.7760843
9 88.606 88.3211667 88.8908333
10 88.61 88.3491361 88.8708639
EOD
set terminal svg size 880,560 dynamic noenhanced font 'Sans,12' background rgb 'white'
set output 'experiments/normalizers/full/plots/curve_fashion_mnist.svg'
set title 'fashion_mnist: test accuracy per epoch (mean, band ± sd over seeds)'
set xlabel 'epoch'
set ylabel 'test accuracy (%)'
set key outside right top
set grid
set xrange [1:10]
set xtics 1
plot $c1 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#1f77b4' notitle, \
     $c1 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#1f77b4' title 'softmax (10 seeds)', \
     $c2 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#d62728' notitle, \
     $c2 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#d62728' title 'sparsemax (5 seeds)', \
     $c3 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#2ca02c' notitle, \
     $c3 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#2ca02c' title 'entmax15 (5 seeds)', \
     $c4 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#9467bd' notitle, \
     $c4 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#9467bd' title 'hae (5 seeds)', \
     $c5 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#ff7f0e' notitle, \
     $c5 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#ff7f0e' title 'topk:0.125 (10 seeds)', \
     $c6 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#8c564b' notitle, \
     $c6 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#8c564b' title 'topk:0.25 (5 seeds)', \
     $c7 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#e377c2' notitle, \
     $c7 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#e377c2' title 'topk:0.5 (5 seeds)'
unset output
set terminal pngcairo size 880,560 noenhanced font 'Sans,10' background rgb 'white'
set output 'experiments/normalizers/full/plots/curve_fashion_mnist.png'
set title 'fashion_mnist: test accuracy per epoch (mean, band ± sd over seeds)'
set xlabel 'epoch'
set ylabel 'test accuracy (%)'
set key outside right top
set grid
set xrange [1:10]
set xtics 1
plot $c1 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#1f77b4' notitle, \
     $c1 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#1f77b4' title 'softmax (10 seeds)', \
     $c2 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#d62728' notitle, \
     $c2 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#d62728' title 'sparsemax (5 seeds)', \
     $c3 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#2ca02c' notitle, \
     $c3 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#2ca02c' title 'entmax15 (5 seeds)', \
     $c4 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#9467bd' notitle, \
     $c4 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#9467bd' title 'hae (5 seeds)', \
     $c5 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#ff7f0e' notitle, \
     $c5 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#ff7f0e' title 'topk:0.125 (10 seeds)', \
     $c6 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#8c564b' notitle, \
     $c6 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#8c564b' title 'topk:0.25 (5 seeds)', \
     $c7 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#e377c2' notitle, \
     $c7 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#e377c2' title 'topk:0.5 (5 seeds)'
unset output
