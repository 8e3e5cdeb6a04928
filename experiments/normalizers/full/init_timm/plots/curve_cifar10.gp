$c1 << EOD
1 35.909 34.9571661 36.8608339
2 42.234 40.9093936 43.5586064
3 45.94 45.0608085 46.8191915
4 48.858 48.0719861 49.6440139
5 50.693 50.0325952 51.3534048
6 52.208 51.7797529 52.6362471
7 53.604 53.1462956 54.0617044
8 54.509 54.0113064 55.0066936
9 55.13 54.6620731 55.5979269
10 55.263 54.7133729 55.8126271
EOD
$c2 << EOD
1 36.034 34.8814839 37.1865161
2 43.469 42.0218461 44.9161539
3 46.729 45.9173289 47.5406711
4 49.663 49.0394965 50.2865035
5 51.322 50.8306798 51.8133202
6 53.022 52.6329899 53.4110101
7 54.369 54.0484987 54.6895013
8 55.323 55.0433554 55.6026446
9 55.831 55.5957956 56.0662044
10 55.943 55.6093318 56.2766682
EOD
$c3 << EOD
1 34.576 33.1787869 35.9732131
2 41.653 40.9188936 42.3871064
3 44.92 44.1411404 45.6988596
4 47.605 46.8366793 48.3733207
5 49.779 49.2271657 50.3308343
6 51.153 50.517127 51.788873
7 52.438 52.0544841 52.8215159
8 53.239 52.6958518 53.7821482
9 53.658 53.2625031 54.0534969
10 53.788 53.4186823 54.1573177
EOD
$c4 << EOD
1 35.451 34.0985664 36.8034336
2 42.193 41.1386224 43.2473776
3 45.88 45.2899906 46.4700094
4 48.532 47.7477551 49.3162449
5 50.335 49.7105135 50.9594865
6 52.305 51.8867962 52.7232038
7 53.478 52.9631149 53.9928851
8 54.104 53.6492913 54.5587087
9 54.67 54.1172091 55.2227909
10 54.924 54.4172851 55.4307149
EOD
if (!exists('svg_out')) svg_out = 'experiments/normalizers/full/init_timm/plots/curve_cifar10.svg'
if (!exists('png_out')) png_out = 'experiments/normalizers/full/init_timm/plots/curve_cifar10.png'
set terminal svg size 880,560 dynamic noenhanced font 'Sans,12' background rgb 'white'
set output svg_out
set title 'cifar10: test accuracy per epoch (mean, band ± sd over seeds)'
set xlabel 'epoch'
set ylabel 'test accuracy (%)'
set key outside right top
set grid
set xrange [1:10]
set xtics 1
plot $c1 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#1f77b4' notitle, \
     $c1 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#1f77b4' title 'softmax (10 seeds)', \
     $c2 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#2ca02c' notitle, \
     $c2 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#2ca02c' title 'entmax15 (10 seeds)', \
     $c3 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#ff7f0e' notitle, \
     $c3 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#ff7f0e' title 'topk:0.125 (10 seeds)', \
     $c4 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#8c564b' notitle, \
     $c4 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#8c564b' title 'topk:0.25 (10 seeds)'
unset output
set terminal pngcairo size 880,560 noenhanced font 'Sans,10' background rgb 'white'
set output png_out
set title 'cifar10: test accuracy per epoch (mean, band ± sd over seeds)'
set xlabel 'epoch'
set ylabel 'test accuracy (%)'
set key outside right top
set grid
set xrange [1:10]
set xtics 1
plot $c1 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#1f77b4' notitle, \
     $c1 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#1f77b4' title 'softmax (10 seeds)', \
     $c2 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#2ca02c' notitle, \
     $c2 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#2ca02c' title 'entmax15 (10 seeds)', \
     $c3 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#ff7f0e' notitle, \
     $c3 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#ff7f0e' title 'topk:0.125 (10 seeds)', \
     $c4 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#8c564b' notitle, \
     $c4 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#8c564b' title 'topk:0.25 (10 seeds)'
unset output
