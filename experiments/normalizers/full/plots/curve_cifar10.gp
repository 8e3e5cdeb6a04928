$c1 << EOD
1 39.186 38.2209761 40.1510239
2 45.776 44.7565644 46.7954356
3 49.141 48.2878301 49.9941699
4 52.217 51.7082095 52.7257905
5 54.317 53.4097079 55.2242921
6 56.132 55.4415122 56.8224878
7 57.526 57.0473166 58.0046834
8 58.455 57.9914569 58.9185431
9 58.963 58.5285642 59.3974358
10 59.088 58.6846033 59.4913967
EOD
$c2 << EOD
1 36.92 36.92 36.92
2 44.75 44.75 44.75
3 46.8 46.8 46.8
4 49.53 49.53 49.53
5 53.74 53.74 53.74
6 55.54 55.54 55.54
7 56.27 56.27 56.27
8 56.99 56.99 56.99
9 57.04 57.04 57.04
10 57.46 57.46 57.46
EOD
$c3 << EOD
1 39.08 39.08 39.08
2 46.9 46.9 46.9
3 48.87 48.87 48.87
4 51.84 51.84 51.84
5 54.39 54.39 54.39
6 56.62 56.62 56.62
7 57.42 57.42 57.42
8 58.38 58.38 58.38
9 58.78 58.78 58.78
10 58.99 58.99 58.99
EOD
$c4 << EOD
1 39.19 39.19 39.19
2 47 47 47
3 48.83 48.83 48.83
4 51.95 51.95 51.95
5 54.38 54.38 54.38
6 56.77 56.77 56.77
7 57.38 57.38 57.38
8 58.44 58.44 58.44
9 58.77 58.77 58.77
10 59.11 59.11 59.11
EOD
$c5 << EOD
1 35.82 35.82 35.82
2 42.74 42.74 42.74
3 45.47 45.47 45.47
4 48.71 48.71 48.71
5 52.09 52.09 52.09
6 52.6 52.6 52.6
7 53.56 53.56 53.56
8 54.63 54.63 54.63
9 55.22 55.22 55.22
10 55.33 55.33 55.33
EOD
$c6 << EOD
1 38.459 37.1154934 39.8025066
2 45.796 44.8290782 46.7629218
3 48.62 48.0251331 49.2148669
4 51.136 50.4600447 51.8119553
5 53.352 52.7320394 53.9719606
6 55.111 54.4042476 55.8177524
7 56.219 55.5880844 56.8499156
8 56.905 56.2559794 57.5540206
9 57.179 56.4270625 57.9309375
10 57.307 56.6102767 58.0037233
EOD
$c7 << EOD
1 40.02 40.02 40.02
2 47.01 47.01 47.01
3 48.33 48.33 48.33
4 51.53 51.53 51.53
5 54.71 54.71 54.71
6 56.21 56.21 56.21
7 57.68 57.68 57.68
8 58.22 58.22 58.22
9 58.51 58.51 58.51
10 58.88 58.88 58.88
EOD
set terminal svg size 880,560 dynamic noenhanced font 'Sans,12' background rgb 'white'
set output 'experiments/normalizers/full/plots/curve_cifar10.svg'
set title 'cifar10: test accuracy per epoch (mean, band ± sd over seeds)'
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
     $c5 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#ff7f0e' title 'topk:0.125 (1 seed)', \
     $c6 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#8c564b' notitle, \
     $c6 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#8c564b' title 'topk:0.25 (10 seeds)', \
     $c7 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#e377c2' notitle, \
     $c7 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#e377c2' title 'topk:0.5 (1 seed)'
unset output
set terminal pngcairo size 880,560 noenhanced font 'Sans,10' background rgb 'white'
set output 'experiments/normalizers/full/plots/curve_cifar10.png'
set title 'cifar10: test accuracy per epoch (mean, band ± sd over seeds)'
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
     $c5 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#ff7f0e' title 'topk:0.125 (1 seed)', \
     $c6 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#8c564b' notitle, \
     $c6 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#8c564b' title 'topk:0.25 (10 seeds)', \
     $c7 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#e377c2' notitle, \
     $c7 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#e377c2' title 'topk:0.5 (1 seed)'
unset output
