$c1 << EOD
1 77.123 76.0330148 78.2129852
2 82.348 81.2028867 83.4931133
3 83.783 83.0095654 84.5564346
4 84.851 84.2722379 85.4297621
5 85.872 85.5792809 86.1647191
6 86.414 86.0572804 86.7707196
7 87.033 86.6813357 87.3846643
8 87.39 87.1508348 87.6291652
9 87.695 87.4832743 87.9067257
10 87.752 87.5494167 87.9545833
EOD
$c2 << EOD
1 77.254 76.1237375 78.3842625
2 82.741 82.2824891 83.1995109
3 83.86 83.1526733 84.5673267
4 85.017 84.3124111 85.7215889
5 86.089 85.6954563 86.4825437
6 86.571 86.1783608 86.9636392
7 87.156 86.7905718 87.5214282
8 87.588 87.3240219 87.8519781
9 87.89 87.6378096 88.1421904
10 87.945 87.6226734 88.2673266
EOD
$c3 << EOD
1 78.082 77.1357113 79.0282887
2 82.856 82.2988007 83.4131993
3 83.863 83.2191392 84.5068608
4 84.67 84.3190331 85.0209669
5 85.943 85.645602 86.240398
6 86.364 86.1203609 86.6076391
7 86.918 86.6794954 87.1565046
8 87.305 87.0356696 87.5743304
9 87.534 87.2980998 87.7699002
10 87.643 87.4163799 87.8696201
EOD
$c4 << EOD
1 78.328 77.1860446 79.4699554
2 82.729 82.1906806 83.2673194
3 84.065 83.4983676 84.6316324
4 85.098 84.6585862 85.5374138
5 86.006 85.588276 86.423724
6 86.489 86.2729007 86.7050993
7 87.029 86.6253927 87.4326073
8 87.438 87.1757533 87.7002467
9 87.618 87.260018 87.975982
10 87.64 87.3173719 87.9626281
EOD
if (!exists('svg_out')) svg_out = 'experiments/normalizers/full/init_timm/plots/curve_fashion_mnist.svg'
if (!exists('png_out')) png_out = 'experiments/normalizers/full/init_timm/plots/curve_fashion_mnist.png'
set terminal svg size 880,560 dynamic noenhanced font 'Sans,12' background rgb 'white'
set output svg_out
set title 'fashion_mnist: test accuracy per epoch (mean, band ± sd over seeds)'
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
set title 'fashion_mnist: test accuracy per epoch (mean, band ± sd over seeds)'
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
