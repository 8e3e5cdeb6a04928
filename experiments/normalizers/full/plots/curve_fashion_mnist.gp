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
1 79.21 79.21 79.21
2 84.72 84.72 84.72
3 85.36 85.36 85.36
4 85.69 85.69 85.69
5 87.11 87.11 87.11
6 87.18 87.18 87.18
7 88.13 88.13 88.13
8 88.05 88.05 88.05
9 88.43 88.43 88.43
10 88.58 88.58 88.58
EOD
$c3 << EOD
1 79.2 79.2 79.2
2 84.86 84.86 84.86
3 84.96 84.96 84.96
4 85.26 85.26 85.26
5 87.29 87.29 87.29
6 87.33 87.33 87.33
7 88.1 88.1 88.1
8 88.34 88.34 88.34
9 88.72 88.72 88.72
10 88.85 88.85 88.85
EOD
$c4 << EOD
1 78.91 78.91 78.91
2 85.15 85.15 85.15
3 85.02 85.02 85.02
4 85.4 85.4 85.4
5 87.43 87.43 87.43
6 87.2 87.2 87.2
7 88.18 88.18 88.18
8 88.27 88.27 88.27
9 88.66 88.66 88.66
10 88.53 88.53 88.53
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
1 78.85 78.85 78.85
2 84.6 84.6 84.6
3 84.78 84.78 84.78
4 86.23 86.23 86.23
5 87.16 87.16 87.16
6 87.32 87.32 87.32
7 88.34 88.34 88.34
8 88.23 88.23 88.23
9 88.43 88.43 88.43
10 88.47 88.47 88.47
EOD
$c7 << EOD
1 80.71 80.71 80.71
2 84.58 84.58 84.58
3 84.49 84.49 84.49
4 85.47 85.47 85.47
5 87.62 87.62 87.62
6 87.5 87.5 87.5
7 88.09 88.09 88.09
8 88.58 88.58 88.58
9 88.75 88.75 88.75
10 88.73 88.73 88.73
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
     $c2 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#d62728' title 'sparsemax (1 seed)', \
     $c3 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#2ca02c' notitle, \
     $c3 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#2ca02c' title 'entmax15 (1 seed)', \
     $c4 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#9467bd' notitle, \
     $c4 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#9467bd' title 'hae (1 seed)', \
     $c5 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#ff7f0e' notitle, \
     $c5 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#ff7f0e' title 'topk:0.125 (10 seeds)', \
     $c6 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#8c564b' notitle, \
     $c6 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#8c564b' title 'topk:0.25 (1 seed)', \
     $c7 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#e377c2' notitle, \
     $c7 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#e377c2' title 'topk:0.5 (1 seed)'
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
     $c2 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#d62728' title 'sparsemax (1 seed)', \
     $c3 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#2ca02c' notitle, \
     $c3 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#2ca02c' title 'entmax15 (1 seed)', \
     $c4 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#9467bd' notitle, \
     $c4 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#9467bd' title 'hae (1 seed)', \
     $c5 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#ff7f0e' notitle, \
     $c5 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#ff7f0e' title 'topk:0.125 (10 seeds)', \
     $c6 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#8c564b' notitle, \
     $c6 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#8c564b' title 'topk:0.25 (1 seed)', \
     $c7 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#e377c2' notitle, \
     $c7 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#e377c2' title 'topk:0.5 (1 seed)'
unset output
