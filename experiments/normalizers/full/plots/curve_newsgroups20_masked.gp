$c1 << EOD
1 66.0559391 64.8757072 67.236171
2 77.3189945 75.3701537 79.2678354
3 77.4915914 76.0596571 78.9235258
4 78.8413879 78.0859767 79.596799
5 79.3414764 78.7610862 79.9218665
6 79.6733935 78.928478 80.4183091
7 80.0761197 79.7900284 80.3622109
8 80.5363781 80.3867575 80.6859988
9 80.5098247 80.3619818 80.6576677
10 80.5142503 80.372287 80.6562136
EOD
$c2 << EOD
1 41.2241105 36.0232239 46.424997
2 68.7688086 68.0438805 69.4937368
3 71.9773411 70.697925 73.2567573
4 72.2428748 70.8552018 73.6305479
5 73.6634803 73.0837992 74.2431613
6 74.6282528 74.4526187 74.8038868
7 74.8539565 74.0437522 75.6641607
8 75.4425562 74.538051 76.3470614
9 75.3407683 74.4047541 76.2767825
10 75.3894495 74.5043481 76.2745508
EOD
$c3 << EOD
1 64.2458842 62.5935901 65.8981784
2 76.5998407 76.0083945 77.1912869
3 77.2304833 76.8549619 77.6060047
4 78.3457249 77.2191607 79.4722891
5 78.617897 78.2142115 79.0215825
6 79.5804567 78.9420704 80.2188431
7 79.3481147 79.2636224 79.432607
8 79.6202868 79.4325261 79.8080475
9 79.6534785 79.4187776 79.8881794
10 79.6468401 79.4027512 79.8909291
EOD
$c4 << EOD
1 64.338821 62.6865269 65.9911152
2 76.5732873 76.0944975 77.0520771
3 77.2172066 77.066998 77.3674151
4 78.4453001 77.6660932 79.2245069
5 78.6842804 78.2805949 79.0879659
6 79.6070101 79.4192494 79.7947708
7 79.9190122 79.5528789 80.2851456
8 79.9853956 79.5817101 80.3890811
9 80.0252257 79.6215402 80.4289112
10 80.0385024 79.653593 80.4234118
EOD
$c5 << EOD
1 61.4378651 60.8464189 62.0293113
2 76.8454594 76.6576987 77.0332201
3 77.9872544 77.9497022 78.0248065
4 78.5647902 78.0484483 79.0811321
5 79.6999469 79.5309623 79.8689315
6 79.9057355 79.8024671 80.0090039
7 80.0783324 79.7121991 80.4444658
8 80.1779076 79.8774905 80.4783247
9 80.0982475 79.7790543 80.4174407
10 80.0716941 79.7525009 80.3908873
EOD
$c6 << EOD
1 65.1752523 64.7809548 65.5695497
2 78.6311737 77.6078779 79.6544695
3 78.5847053 77.7585582 79.4108523
4 79.0427509 77.8504705 80.2350313
5 79.8393521 78.1588939 81.5198103
6 80.5297398 79.6942047 81.3652749
7 80.6956984 80.0760881 81.3153087
8 81.0077005 80.2848218 81.7305792
9 81.0541689 80.3406782 81.7676595
10 81.0608072 80.3942568 81.7273577
EOD
$c7 << EOD
1 64.7039299 61.8030271 67.6048327
2 77.9341476 77.1455527 78.7227426
3 77.6752523 77.1776864 78.1728181
4 78.2859798 77.8259661 78.7459935
5 79.7464153 79.136193 80.3566376
6 80.4434413 79.805055 81.0818277
7 80.4500797 80.2153788 80.6847805
8 80.7355284 80.360007 81.1110498
9 80.68906 80.2665984 81.1115216
10 80.7156134 80.3119279 81.1192989
EOD
set terminal svg size 880,560 dynamic noenhanced font 'Sans,12' background rgb 'white'
set output 'experiments/normalizers/full/plots/curve_newsgroups20_masked.svg'
set title 'newsgroups20_masked: test accuracy per epoch (mean, band ± sd over seeds)'
set xlabel 'epoch'
set ylabel 'test accuracy (%)'
set key outside right top
set grid
set xrange [1:10]
set xtics 1
plot $c1 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#1f77b4' notitle, \
     $c1 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#1f77b4' title 'softmax (3 seeds)', \
     $c2 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#d62728' notitle, \
     $c2 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#d62728' title 'sparsemax (3 seeds)', \
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
set output 'experiments/normalizers/full/plots/curve_newsgroups20_masked.png'
set title 'newsgroups20_masked: test accuracy per epoch (mean, band ± sd over seeds)'
set xlabel 'epoch'
set ylabel 'test accuracy (%)'
set key outside right top
set grid
set xrange [1:10]
set xtics 1
plot $c1 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#1f77b4' notitle, \
     $c1 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#1f77b4' title 'softmax (3 seeds)', \
     $c2 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#d62728' notitle, \
     $c2 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#d62728' title 'sparsemax (3 seeds)', \
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
