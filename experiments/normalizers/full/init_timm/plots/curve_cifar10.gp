$c1 << EOD
1 35.576 34.4687602 36.6832398
2 41.736 40.1711741 43.3008259
3 45.676 44.6064767 46.7455233
4 48.454 47.7109791 49.1970209
5 50.418 49.9545672 50.8814328
6 51.952 51.6937947 52.2102053
7 53.466 53.1543431 53.7776569
8 54.262 53.9241095 54.5998905
9 54.942 54.4888223 55.3951777
10 54.976 54.5641384 55.3878616
EOD
$c2 << EOD
1 35.7 34.3626893 37.0373107
2 42.478 41.2180317 43.7379683
3 46.394 45.4408316 47.3471684
4 49.438 48.6819775 50.1940225
5 51.14 50.635421 51.644579
6 52.852 52.5070072 53.1969928
7 54.154 53.8826515 54.4253485
8 55.146 54.8365166 55.4554834
9 55.74 55.4943376 55.9856624
10 55.836 55.4363376 56.2356624
EOD
$c3 << EOD
1 34.428 32.564235 36.291765
2 41.378 40.5750243 42.1809757
3 44.44 43.8925514 44.9874486
4 47.108 46.4627326 47.7532674
5 49.742 49.2510112 50.2329888
6 51.002 50.3957245 51.6082755
7 52.506 52.0655116 52.9464884
8 53.182 52.6259694 53.7380306
9 53.668 53.3960257 53.9399743
10 53.752 53.4563313 54.0476687
EOD
$c4 << EOD
1 35.364 33.7124159 37.0155841
2 42.114 41.1235557 43.1044443
3 45.706 45.2206857 46.1913143
4 48.222 47.5169326 48.9270674
5 49.87 49.5421281 50.1978719
6 52.164 51.7446195 52.5833805
7 53.434 52.7636046 54.1043954
8 53.834 53.4662637 54.2017363
9 54.492 53.8120221 55.1719779
10 54.702 54.2044359 55.1995641
EOD
set terminal svg size 880,560 dynamic noenhanced font 'Sans,12' background rgb 'white'
set output 'experiments/normalizers/full/init_timm/plots/curve_cifar10.svg'
set title 'cifar10: test accuracy per epoch (mean, band ± sd over seeds)'
set xlabel 'epoch'
set ylabel 'test accuracy (%)'
set key outside right top
set grid
set xrange [1:10]
set xtics 1
plot $c1 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#1f77b4' notitle, \
     $c1 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#1f77b4' title 'softmax (5 seeds)', \
     $c2 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#2ca02c' notitle, \
     $c2 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#2ca02c' title 'entmax15 (5 seeds)', \
     $c3 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#ff7f0e' notitle, \
     $c3 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#ff7f0e' title 'topk:0.125 (5 seeds)', \
     $c4 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#8c564b' notitle, \
     $c4 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#8c564b' title 'topk:0.25 (5 seeds)'
unset output
set terminal pngcairo size 880,560 noenhanced font 'Sans,10' background rgb 'white'
set output 'experiments/normalizers/full/init_timm/plots/curve_cifar10.png'
set title 'cifar10: test accuracy per epoch (mean, band ± sd over seeds)'
set xlabel 'epoch'
set ylabel 'test accuracy (%)'
set key outside right top
set grid
set xrange [1:10]
set xtics 1
plot $c1 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#1f77b4' notitle, \
     $c1 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#1f77b4' title 'softmax (5 seeds)', \
     $c2 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#2ca02c' notitle, \
     $c2 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#2ca02c' title 'entmax15 (5 seeds)', \
     $c3 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#ff7f0e' notitle, \
     $c3 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#ff7f0e' title 'topk:0.125 (5 seeds)', \
     $c4 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#8c564b' notitle, \
     $c4 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#8c564b' title 'topk:0.25 (5 seeds)'
unset output
