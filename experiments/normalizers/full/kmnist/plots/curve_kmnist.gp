$c1 << EOD
1 32.465 29.8699138 35.0600862
2 48.605 46.6039655 50.6060345
3 58.15 56.3372366 59.9627634
4 63.96 63.1210854 64.7989146
5 68.85 67.2734355 70.4265645
6 71.4 70.3093835 72.4906165
7 72.925 71.7024685 74.1475315
8 74.84 73.2801211 76.3998789
9 76.02 74.9364872 77.1035128
10 77.545 76.7055392 78.3844608
11 78.395 77.2119132 79.5780868
12 78.71 77.5524643 79.8675357
13 79.7 78.8400904 80.5599096
14 79.575 78.6854777 80.4645223
15 79.98 79.2669471 80.6930529
16 79.93 79.2057379 80.6542621
17 80.24 79.3762871 81.1037129
18 80.52 79.7813075 81.2586925
19 80.475 79.6679994 81.2820006
20 80.635 79.8284125 81.4415875
EOD
$c2 << EOD
1 33.57 31.4419858 35.6980142
2 49.595 47.5575111 51.6324889
3 57.175 54.8009212 59.5490788
4 64.3 62.1357706 66.4642294
5 67.59 65.8255675 69.3544325
6 71.01 69.3234849 72.6965151
7 72.465 71.2450159 73.6849841
8 74.21 72.7361916 75.6838084
9 75.485 74.0963456 76.8736544
10 76.97 75.6330881 78.3069119
11 76.995 75.6914898 78.2985102
12 78.22 77.0449823 79.3950177
13 78.515 77.5166541 79.5133459
14 78.77 77.3223582 80.2176418
15 79.04 77.933504 80.146496
16 78.97 77.7971118 80.1428882
17 79.245 78.1127824 80.3772176
18 79.145 78.0834367 80.2065633
19 79.065 78.0402914 80.0897086
20 79.15 78.0432028 80.2567972
EOD
set terminal svg size 880,560 dynamic noenhanced font 'Sans,12' background rgb 'white'
set output 'experiments/normalizers/full/kmnist/plots/curve_kmnist.svg'
set title 'kmnist: test accuracy per epoch (mean, band ± sd over seeds)'
set xlabel 'epoch'
set ylabel 'test accuracy (%)'
set key outside right top
set grid
set xrange [1:20]
set xtics 1
plot $c1 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#1f77b4' notitle, \
     $c1 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#1f77b4' title 'softmax (10 seeds)', \
     $c2 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#8c564b' notitle, \
     $c2 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#8c564b' title 'topk:0.25 (10 seeds)'
unset output
set terminal pngcairo size 880,560 noenhanced font 'Sans,10' background rgb 'white'
set output 'experiments/normalizers/full/kmnist/plots/curve_kmnist.png'
set title 'kmnist: test accuracy per epoch (mean, band ± sd over seeds)'
set xlabel 'epoch'
set ylabel 'test accuracy (%)'
set key outside right top
set grid
set xrange [1:20]
set xtics 1
plot $c1 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#1f77b4' notitle, \
     $c1 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#1f77b4' title 'softmax (10 seeds)', \
     $c2 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#8c564b' notitle, \
     $c2 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#8c564b' title 'topk:0.25 (10 seeds)'
unset output
