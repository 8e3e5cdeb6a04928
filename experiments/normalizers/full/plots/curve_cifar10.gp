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
1 37.449 36.2679698 38.6300302
2 44.691 43.7674868 45.6145132
3 47.695 46.7783606 48.6116394
4 50.748 50.0068477 51.4891523
5 52.669 51.9161912 53.4218088
6 54.626 53.9093225 55.3426775
7 55.871 55.3640604 56.3779396
8 56.438 55.9821053 56.8938947
9 56.822 56.3938048 57.2501952
10 56.962 56.4918511 57.4321489
EOD
$c3 << EOD
1 38.684 37.4049535 39.9630465
2 46.252 45.303565 47.200435
3 49.434 48.6917033 50.1762967
4 52.123 51.5325378 52.7134622
5 54.19 53.4967628 54.8832372
6 55.853 55.2271841 56.4788159
7 56.925 56.2427448 57.6072552
8 57.722 56.9048124 58.5391876
9 58.026 57.260244 58.791756
10 58.236 57.44637 59.02563
EOD
$c4 << EOD
1 38.696 37.4096252 39.9823748
2 46.317 45.3704032 47.2635968
3 49.541 48.8762285 50.2057715
4 52.098 51.4596375 52.7363625
5 54.228 53.5173071 54.9386929
6 55.907 55.262984 56.551016
7 56.965 56.2687042 57.6612958
8 57.762 56.949763 58.574237
9 58.042 57.2599542 58.8240458
10 58.328 57.5245657 59.1314343
EOD
$c5 << EOD
1 36.988 36.1535235 37.8224765
2 43.79 42.7841394 44.7958606
3 47.466 46.6082743 48.3237257
4 49.711 48.9937762 50.4282238
5 52.068 51.6246842 52.5113158
6 53.498 53.0494022 53.9465978
7 54.79 54.1473838 55.4326162
8 55.523 55.051288 55.994712
9 55.899 55.5350266 56.2629734
10 56.001 55.6022952 56.3997048
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
1 38.529 37.4378594 39.6201406
2 46.202 45.5212031 46.8827969
3 49.231 48.4836573 49.9783427
4 51.896 51.2663052 52.5256948
5 53.992 53.2554646 54.7285354
6 55.857 55.3509027 56.3630973
7 56.945 56.2628262 57.6271738
8 57.868 57.119523 58.616477
9 58.214 57.4992786 58.9287214
10 58.313 57.616181 59.009819
EOD
if (!exists('svg_out')) svg_out = 'experiments/normalizers/full/plots/curve_cifar10.svg'
if (!exists('png_out')) png_out = 'experiments/normalizers/full/plots/curve_cifar10.png'
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
     $c2 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#d62728' notitle, \
     $c2 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#d62728' title 'sparsemax (10 seeds)', \
     $c3 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#2ca02c' notitle, \
     $c3 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#2ca02c' title 'entmax15 (10 seeds)', \
     $c4 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#9467bd' notitle, \
     $c4 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#9467bd' title 'hae (10 seeds)', \
     $c5 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#ff7f0e' notitle, \
     $c5 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#ff7f0e' title 'topk:0.125 (10 seeds)', \
     $c6 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#8c564b' notitle, \
     $c6 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#8c564b' title 'topk:0.25 (10 seeds)', \
     $c7 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#e377c2' notitle, \
     $c7 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#e377c2' title 'topk:0.5 (10 seeds)'
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
     $c2 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#d62728' notitle, \
     $c2 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#d62728' title 'sparsemax (10 seeds)', \
     $c3 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#2ca02c' notitle, \
     $c3 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#2ca02c' title 'entmax15 (10 seeds)', \
     $c4 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#9467bd' notitle, \
     $c4 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#9467bd' title 'hae (10 seeds)', \
     $c5 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#ff7f0e' notitle, \
     $c5 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#ff7f0e' title 'topk:0.125 (10 seeds)', \
     $c6 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#8c564b' notitle, \
     $c6 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#8c564b' title 'topk:0.25 (10 seeds)', \
     $c7 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#e377c2' notitle, \
     $c7 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#e377c2' title 'topk:0.5 (10 seeds)'
unset output
