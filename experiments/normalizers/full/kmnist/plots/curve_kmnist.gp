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
1 33.275 30.7647709 35.7852291
2 45.575 44.5496952 46.6003048
3 56.35 56.2085786 56.4914214
4 65.375 62.9354816 67.8145184
5 66.875 63.7283748 70.0216252
6 69.5 66.7422836 72.2577164
7 72.225 69.5026389 74.9473611
8 73.9 70.7180195 77.0819805
9 74.45 72.6115224 76.2884776
10 75.9 73.6372583 78.1627417
11 76.325 73.1076641 79.5423359
12 77.05 75.4943651 78.6056349
13 77.525 75.7218777 79.3281223
14 78.125 75.826903 80.423097
15 77.75 75.770101 79.729899
16 78.125 75.9683243 80.2816757
17 77.925 75.626903 80.223097
18 78.225 76.0683243 80.3816757
19 78.025 75.939035 80.110965
20 78.125 76.251167 79.998833
EOD
$c3 << EOD
1 34.35 34.35 34.35
2 47.9 47.9 47.9
3 61.95 61.95 61.95
4 66.95 66.95 66.95
5 71 71 71
6 71.05 71.05 71.05
7 73.7 73.7 73.7
8 74.8 74.8 74.8
9 76.3 76.3 76.3
10 76.65 76.65 76.65
11 77 77 77
12 78.45 78.45 78.45
13 78.25 78.25 78.25
14 78.85 78.85 78.85
15 78.55 78.55 78.55
16 79.1 79.1 79.1
17 78.75 78.75 78.75
18 79 79 79
19 79.05 79.05 79.05
20 79.1 79.1 79.1
EOD
$c4 << EOD
1 34.4 34.4 34.4
2 47.95 47.95 47.95
3 61.95 61.95 61.95
4 67.1 67.1 67.1
5 71.15 71.15 71.15
6 70.9 70.9 70.9
7 73.5 73.5 73.5
8 74.85 74.85 74.85
9 76.2 76.2 76.2
10 76.4 76.4 76.4
11 77.1 77.1 77.1
12 78.35 78.35 78.35
13 78.45 78.45 78.45
14 78.9 78.9 78.9
15 78.75 78.75 78.75
16 78.9 78.9 78.9
17 78.55 78.55 78.55
18 78.9 78.9 78.9
19 78.95 78.95 78.95
20 78.9 78.9 78.9
EOD
$c5 << EOD
1 30.35 30.35 30.35
2 47.55 47.55 47.55
3 57.75 57.75 57.75
4 62.55 62.55 62.55
5 64.95 64.95 64.95
6 68.9 68.9 68.9
7 69.4 69.4 69.4
8 71.3 71.3 71.3
9 72.3 72.3 72.3
10 73.35 73.35 73.35
11 73.05 73.05 73.05
12 75.55 75.55 75.55
13 75.9 75.9 75.9
14 76.25 76.25 76.25
15 75.25 75.25 75.25
16 75.85 75.85 75.85
17 75.8 75.8 75.8
18 76.6 76.6 76.6
19 75.85 75.85 75.85
20 75.6 75.6 75.6
EOD
$c6 << EOD
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
$c7 << EOD
1 32.75 32.75 32.75
2 47.95 47.95 47.95
3 57 57 57
4 64.2 64.2 64.2
5 68.5 68.5 68.5
6 70.45 70.45 70.45
7 71.95 71.95 71.95
8 74.05 74.05 74.05
9 75.75 75.75 75.75
10 73.95 73.95 73.95
11 75.95 75.95 75.95
12 77.2 77.2 77.2
13 77.9 77.9 77.9
14 78.2 78.2 78.2
15 77.35 77.35 77.35
16 78.2 78.2 78.2
17 78.75 78.75 78.75
18 78.65 78.65 78.65
19 78.95 78.95 78.95
20 78.65 78.65 78.65
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
     $c2 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#d62728' notitle, \
     $c2 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#d62728' title 'sparsemax (2 seeds)', \
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
     $c2 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#d62728' notitle, \
     $c2 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#d62728' title 'sparsemax (2 seeds)', \
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
