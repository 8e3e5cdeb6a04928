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
     $c2 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#8c564b' notitle, \
     $c2 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#8c564b' title 'topk:0.25 (10 seeds)'
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
     $c2 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#8c564b' notitle, \
     $c2 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#8c564b' title 'topk:0.25 (10 seeds)'
unset output
