$c1 << EOD
1 17.1 17.1 17.1
2 23.4 23.2585786 23.5414214
3 22.675 21.9325379 23.4174621
4 22.95 22.95 22.95
5 21.8 21.3050253 22.2949747
6 21.4 20.9757359 21.8242641
7 20.975 20.7275126 21.2224874
8 20.975 20.7275126 21.2224874
9 20.775 20.3153806 21.2346194
10 20.525 20.1360913 20.9139087
EOD
$c2 << EOD
1 16.9 16.4757359 17.3242641
2 20.825 20.1532486 21.4967514
3 20.05 20.05 20.05
4 21.7 20.6393398 22.7606602
5 20.75 20.0428932 21.4571068
6 20.8 20.3050253 21.2949747
7 19.75 19.6792893 19.8207107
8 19.175 18.9982233 19.3517767
9 18.5 18.0757359 18.9242641
10 18.825 18.5775126 19.0724874
EOD
$c3 << EOD
1 20.175 18.7961418 21.5538582
2 23.95 23.8792893 24.0207107
3 21.675 20.2254311 23.1245689
4 21.5 21.1464466 21.8535534
5 21.65 20.3772078 22.9227922
6 20.1 19.4636039 20.7363961
7 18.875 18.8396447 18.9103553
8 18.475 18.0153806 18.9346194
9 18.7 18.4171573 18.9828427
10 18.525 18.2068019 18.8431981
EOD
$c4 << EOD
1 20.225 18.7754311 21.6745689
2 23.95 23.4550253 24.4449747
3 21.175 20.3618272 21.9881728
4 21.775 21.4568019 22.0931981
5 20.25 20.1085786 20.3914214
6 19.55 18.6307612 20.4692388
7 19.125 17.9582738 20.2917262
8 18.325 17.5118272 19.1381728
9 18.3 17.2393398 19.3606602
10 18.025 16.7875631 19.2624369
EOD
$c5 << EOD
1 20 17.4544156 22.5455844
2 24.7 23.4979185 25.9020815
3 23.9 23.2636039 24.5363961
4 23.325 23.0775126 23.5724874
5 21.725 21.5482233 21.9017767
6 21.075 20.8982233 21.2517767
7 20.525 20.0653806 20.9846194
8 20.425 19.7532486 21.0967514
9 20.05 19.6257359 20.4742641
10 20.25 19.6136039 20.8863961
EOD
$c6 << EOD
1 20.725 19.8411165 21.6088835
2 24.35 23.2186292 25.4813708
3 23.125 22.3118272 23.9381728
4 22.35 22.2085786 22.4914214
5 21.475 21.1568019 21.7931981
6 20.75 20.4671573 21.0328427
7 20.525 20.2775126 20.7724874
8 19.975 18.8789845 21.0710155
9 20.125 18.7461418 21.5038582
10 19.925 18.6168525 21.2331475
EOD
$c7 << EOD
1 19.25 18.5428932 19.9571068
2 24.4 24.187868 24.612132
3 23.1 22.9585786 23.2414214
4 22.875 21.9204058 23.8295942
5 21.2 20.987868 21.412132
6 20.95 20.3136039 21.5863961
7 21.225 20.4825379 21.9674621
8 20.825 20.5775126 21.0724874
9 20.375 20.1982233 20.5517767
10 20.475 19.8739592 21.0760408
EOD
set terminal svg size 880,560 dynamic noenhanced font 'Sans,12' background rgb 'white'
set output 'experiments/normalizers/full/plots/curve_marker.svg'
set title 'marker: test accuracy per epoch (mean, band ± sd over seeds)'
set xlabel 'epoch'
set ylabel 'test accuracy (%)'
set key outside right top
set grid
set xrange [1:10]
set xtics 1
plot $c1 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#1f77b4' notitle, \
     $c1 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#1f77b4' title 'softmax (2 seeds)', \
     $c2 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#d62728' notitle, \
     $c2 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#d62728' title 'sparsemax (2 seeds)', \
     $c3 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#2ca02c' notitle, \
     $c3 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#2ca02c' title 'entmax15 (2 seeds)', \
     $c4 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#9467bd' notitle, \
     $c4 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#9467bd' title 'hae (2 seeds)', \
     $c5 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#ff7f0e' notitle, \
     $c5 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#ff7f0e' title 'topk:0.125 (2 seeds)', \
     $c6 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#8c564b' notitle, \
     $c6 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#8c564b' title 'topk:0.25 (2 seeds)', \
     $c7 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#e377c2' notitle, \
     $c7 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#e377c2' title 'topk:0.5 (2 seeds)'
unset output
set terminal pngcairo size 880,560 noenhanced font 'Sans,10' background rgb 'white'
set output 'experiments/normalizers/full/plots/curve_marker.png'
set title 'marker: test accuracy per epoch (mean, band ± sd over seeds)'
set xlabel 'epoch'
set ylabel 'test accuracy (%)'
set key outside right top
set grid
set xrange [1:10]
set xtics 1
plot $c1 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#1f77b4' notitle, \
     $c1 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#1f77b4' title 'softmax (2 seeds)', \
     $c2 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#d62728' notitle, \
     $c2 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#d62728' title 'sparsemax (2 seeds)', \
     $c3 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#2ca02c' notitle, \
     $c3 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#2ca02c' title 'entmax15 (2 seeds)', \
     $c4 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#9467bd' notitle, \
     $c4 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#9467bd' title 'hae (2 seeds)', \
     $c5 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#ff7f0e' notitle, \
     $c5 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#ff7f0e' title 'topk:0.125 (2 seeds)', \
     $c6 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#8c564b' notitle, \
     $c6 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#8c564b' title 'topk:0.25 (2 seeds)', \
     $c7 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#e377c2' notitle, \
     $c7 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#e377c2' title 'topk:0.5 (2 seeds)'
unset output
