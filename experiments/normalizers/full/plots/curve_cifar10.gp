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
1 37.3516667 35.9351016 38.7682318
2 44.5533333 43.4062908 45.7003759
3 47.1816667 46.5250567 47.8382766
4 50.6433333 49.784691 51.5019757
5 52.7383333 51.9939298 53.4827369
6 54.585 53.6839617 55.4860383
7 55.7533333 55.1369352 56.3697315
8 56.33 55.7680391 56.8919609
9 56.835 56.3839235 57.2860765
10 56.9516667 56.3570435 57.5462898
EOD
$c3 << EOD
1 38.4466667 36.9035054 39.9898279
2 45.8666667 44.8420952 46.8912381
3 49.1 48.366897 49.833103
4 52.2166667 51.579904 52.8534293
5 53.9916667 53.3333835 54.6499498
6 55.9816667 55.5112874 56.4520459
7 57.0866667 56.7145556 57.4587778
8 57.8483333 57.3784646 58.3182021
9 58.2316667 57.850174 58.6131593
10 58.4566667 58.0899697 58.8233636
EOD
$c4 << EOD
1 38.242 36.6319783 39.8520217
2 45.732 44.820781 46.643219
3 49.23 48.6820949 49.7779051
4 52.01 51.4048554 52.6151446
5 53.906 53.2886427 54.5233573
6 55.92 55.4336873 56.4063127
7 57.16 56.7642097 57.5557903
8 57.84 57.2776389 58.4023611
9 58.192 57.7329031 58.6510969
10 58.528 58.0943873 58.9616127
EOD
$c5 << EOD
1 36.654 35.680871 37.627129
2 43.428 42.1521787 44.7038213
3 47.28 46.0861198 48.4738802
4 49.468 48.7260297 50.2099703
5 52.058 51.4297723 52.6862277
6 53.372 52.8093545 53.9346455
7 54.608 53.8286605 55.3873395
8 55.324 54.8165259 55.8314741
9 55.798 55.4325961 56.1634039
10 55.852 55.4296613 56.2743387
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
1 38.41 36.7944196 40.0255804
2 45.99 45.0821729 46.8978271
3 48.874 48.2383665 49.5096335
4 51.736 51.2429179 52.2290821
5 53.652 52.8512066 54.4527934
6 55.55 55.0669369 56.0330631
7 57.036 56.6263294 57.4456706
8 57.722 57.1275086 58.3164914
9 58.078 57.635315 58.520685
10 58.24 57.7282872 58.7517128
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
     $c2 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#d62728' title 'sparsemax (6 seeds)', \
     $c3 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#2ca02c' notitle, \
     $c3 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#2ca02c' title 'entmax15 (6 seeds)', \
     $c4 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#9467bd' notitle, \
     $c4 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#9467bd' title 'hae (5 seeds)', \
     $c5 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#ff7f0e' notitle, \
     $c5 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#ff7f0e' title 'topk:0.125 (5 seeds)', \
     $c6 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#8c564b' notitle, \
     $c6 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#8c564b' title 'topk:0.25 (10 seeds)', \
     $c7 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#e377c2' notitle, \
     $c7 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#e377c2' title 'topk:0.5 (5 seeds)'
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
     $c2 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#d62728' title 'sparsemax (6 seeds)', \
     $c3 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#2ca02c' notitle, \
     $c3 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#2ca02c' title 'entmax15 (6 seeds)', \
     $c4 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#9467bd' notitle, \
     $c4 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#9467bd' title 'hae (5 seeds)', \
     $c5 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#ff7f0e' notitle, \
     $c5 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#ff7f0e' title 'topk:0.125 (5 seeds)', \
     $c6 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#8c564b' notitle, \
     $c6 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#8c564b' title 'topk:0.25 (10 seeds)', \
     $c7 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#e377c2' notitle, \
     $c7 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#e377c2' title 'topk:0.5 (5 seeds)'
unset output
