$c1 << EOD
1 66.0276155 65.030387 67.024844
2 77.6845459 76.2175052 79.1515867
3 77.9792884 76.6869886 79.2715881
4 78.866171 78.3102598 79.4220822
5 79.6840149 79.031739 80.3362908
6 79.8592671 79.1789098 80.5396244
7 80.2973978 79.9211729 80.6736226
8 80.6266596 80.4232618 80.8300574
9 80.669145 80.3938338 80.9444562
10 80.661179 80.4053486 80.9170094
EOD
$c2 << EOD
1 41.0993096 37.3823757 44.8162435
2 68.8794477 68.2898671 69.4690282
3 72.3871482 71.2255557 73.5487406
4 73.0164631 71.5694992 74.463427
5 74.0122146 73.2695741 74.754855
6 74.7742963 74.5069433 75.0416494
7 75.2549124 74.4553075 76.0545173
8 75.653213 74.9356944 76.3707316
9 75.6133829 74.8283501 76.3984157
10 75.653213 74.9066192 76.3998067
EOD
$c3 << EOD
1 64.5698354 63.3371539 65.8025169
2 76.5560276 76.125568 76.9864872
3 77.28359 77.0738772 77.4933028
4 77.6447159 76.7697933 78.5196384
5 78.637812 78.3058948 78.9697292
6 79.3043016 78.8878918 79.7207115
7 79.3414764 79.254923 79.4280298
8 79.4901753 79.3315758 79.6487747
9 79.5167286 79.3338667 79.6995906
10 79.52735 79.3534811 79.7012188
EOD
$c4 << EOD
1 64.6229421 63.4239317 65.8219526
2 76.5029209 76.0239103 76.9819315
3 77.275624 77.1691619 77.3820861
4 77.8199681 77.078456 78.5614803
5 78.629846 78.4202172 78.8394747
6 79.4742432 79.3034429 79.6450436
7 79.6388741 79.217708 80.0600403
8 79.8061604 79.5007966 80.1115242
9 79.8300584 79.5166611 80.1434557
10 79.8327138 79.5239059 80.1415216
EOD
$c5 << EOD
1 62.8996283 61.3716957 64.4275608
2 77.1720659 76.8452867 77.498845
3 77.8146575 77.5889538 78.0403611
4 78.4758364 78.0778236 78.8738492
5 79.4875199 79.1730558 79.801984
6 79.9229952 79.5315693 80.3144211
7 80.031864 79.6253502 80.4383779
8 80.1194902 79.7909626 80.4480177
9 80.1141795 79.7511404 80.4772186
10 80.1088688 79.7231131 80.4946245
EOD
$c6 << EOD
1 65.0982475 64.4071325 65.7893624
2 78.5156665 77.9796927 79.0516402
3 78.2740308 77.6388555 78.9092061
4 78.7865109 78.0261728 79.546849
5 79.5645247 78.4558061 80.6732433
6 80.1088688 79.5042765 80.7134612
7 80.2177377 79.681879 80.7535963
8 80.4699947 79.8390377 81.1009517
9 80.4938927 79.8520367 81.1357488
10 80.5045141 79.8838663 81.1251619
EOD
$c7 << EOD
1 65.5337228 62.9521498 68.1152958
2 78.3988317 77.8031536 78.9945097
3 78.0562931 77.4508268 78.6617595
4 78.6006373 78.0541601 79.1471145
5 79.6680828 79.069998 80.2661677
6 80.220393 79.6204836 80.8203024
7 80.3611259 79.947903 80.7743487
8 80.5629315 80.1231945 81.0026685
9 80.5469995 80.1352723 80.9587266
10 80.5655868 80.1430835 80.9880901
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
     $c1 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#1f77b4' title 'softmax (5 seeds)', \
     $c2 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#d62728' notitle, \
     $c2 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#d62728' title 'sparsemax (5 seeds)', \
     $c3 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#2ca02c' notitle, \
     $c3 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#2ca02c' title 'entmax15 (5 seeds)', \
     $c4 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#9467bd' notitle, \
     $c4 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#9467bd' title 'hae (5 seeds)', \
     $c5 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#ff7f0e' notitle, \
     $c5 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#ff7f0e' title 'topk:0.125 (5 seeds)', \
     $c6 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#8c564b' notitle, \
     $c6 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#8c564b' title 'topk:0.25 (5 seeds)', \
     $c7 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#e377c2' notitle, \
     $c7 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#e377c2' title 'topk:0.5 (5 seeds)'
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
     $c1 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#1f77b4' title 'softmax (5 seeds)', \
     $c2 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#d62728' notitle, \
     $c2 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#d62728' title 'sparsemax (5 seeds)', \
     $c3 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#2ca02c' notitle, \
     $c3 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#2ca02c' title 'entmax15 (5 seeds)', \
     $c4 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#9467bd' notitle, \
     $c4 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#9467bd' title 'hae (5 seeds)', \
     $c5 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#ff7f0e' notitle, \
     $c5 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#ff7f0e' title 'topk:0.125 (5 seeds)', \
     $c6 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#8c564b' notitle, \
     $c6 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#8c564b' title 'topk:0.25 (5 seeds)', \
     $c7 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#e377c2' notitle, \
     $c7 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#e377c2' title 'topk:0.5 (5 seeds)'
unset output
