$c1 << EOD
1 66.5294742 65.2681192 67.7908293
2 77.5252257 76.1481034 78.902348
3 77.9142326 76.8798385 78.9486267
4 78.6271907 77.5836247 79.6707566
5 79.5525757 78.8595702 80.2455811
6 80.1048858 79.4437344 80.7660372
7 80.4009559 79.8960228 80.9058891
8 80.5788635 80.2068635 80.9508635
9 80.6133829 80.1547529 81.0720129
10 80.6147106 80.1673806 81.0620405
EOD
$c2 << EOD
1 42.2185343 39.1818669 45.2552016
2 68.9484865 68.3612092 69.5357637
3 72.1879979 71.1690839 73.2069118
4 73.1996814 72.1722416 74.2271211
5 73.9657461 73.3663986 74.5650937
6 74.5326606 73.7977028 75.2676185
7 75.2110993 74.5657422 75.8564564
8 75.5775358 74.8871127 76.267959
9 75.5735528 74.8758619 76.2712438
10 75.6001062 74.9311638 76.2690486
EOD
$c3 << EOD
1 65.5629315 64.1500082 66.9758548
2 76.6157727 75.3876804 77.843865
3 77.259692 76.6712154 77.8481686
4 77.7429634 77.1078621 78.3780647
5 78.3550186 77.9036525 78.8063847
6 78.9883165 78.4058816 79.5707514
7 79.1980882 78.8475568 79.5486195
8 79.346787 78.9114953 79.7820788
9 79.3720127 78.9346629 79.8093626
10 79.3892724 78.9455141 79.8330308
EOD
$c4 << EOD
1 65.6067446 64.2200351 66.993454
2 76.59453 75.3589427 77.8301173
3 77.2331386 76.7312791 77.7349981
4 77.8929899 77.2944271 78.4915527
5 78.3258099 77.8987374 78.7528823
6 79.0387679 78.3301305 79.7474053
7 79.3667021 78.834476 79.8989281
8 79.4848646 78.9576912 80.012038
9 79.5140733 78.9773564 80.0507902
10 79.5127456 78.9823627 80.0431285
EOD
$c5 << EOD
1 63.6590547 62.2044808 65.1136286
2 77.3871482 76.6441597 78.1301366
3 77.4017525 76.4736192 78.3298858
4 78.4824748 77.8826176 79.0823319
5 79.298991 78.6486652 79.9493167
6 79.6840149 79.1198364 80.2481933
7 79.8260754 79.2576275 80.3945233
8 79.9349442 79.3722518 80.4976367
9 79.9588423 79.4034298 80.5142547
10 79.9641529 79.412484 80.5158219
EOD
$c6 << EOD
1 65.8284652 64.5668493 67.0900811
2 78.4227297 77.5675581 79.2779013
3 78.0576208 77.4429598 78.6722818
4 78.8714817 78.3068035 79.4361598
5 79.5021243 78.6047178 80.3995307
6 80 79.3720628 80.6279372
7 80.2031333 79.7208709 80.6853957
8 80.3279341 79.7204848 80.9353834
9 80.3704195 79.7513389 80.9895002
10 80.3863516 79.7898341 80.9828691
EOD
$c7 << EOD
1 66.3329793 64.0264266 68.639532
2 78.0748805 77.0742689 79.0754922
3 77.6858736 76.5187991 78.8529481
4 78.5608072 78.0575058 79.0641086
5 79.7105682 79.1621627 80.2589738
6 80.2721721 79.7254244 80.8189198
7 80.4089219 79.9121065 80.9057373
8 80.5815189 80.0587702 81.1042675
9 80.5629315 80.0520905 81.0737725
10 80.5735528 80.0470858 81.1000199
EOD
if (!exists('svg_out')) svg_out = 'experiments/normalizers/full/plots/curve_newsgroups20_masked.svg'
if (!exists('png_out')) png_out = 'experiments/normalizers/full/plots/curve_newsgroups20_masked.png'
set terminal svg size 880,560 dynamic noenhanced font 'Sans,12' background rgb 'white'
set output svg_out
set title 'newsgroups20_masked: test accuracy per epoch (mean, band ± sd over seeds)'
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
set title 'newsgroups20_masked: test accuracy per epoch (mean, band ± sd over seeds)'
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
