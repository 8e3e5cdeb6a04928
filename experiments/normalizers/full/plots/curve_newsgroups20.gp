$c1 << EOD
1 65.3611259 63.9961287 66.726123
2 77.920871 76.9313248 78.9104171
3 77.527881 76.3758366 78.6799255
4 78.40547 77.5451733 79.2657667
5 79.7065852 79.1926386 80.2205319
6 80.2097716 79.609257 80.8102863
7 80.436803 79.9201577 80.9534483
8 80.7023367 80.2785328 81.1261406
9 80.7222517 80.2874642 81.1570393
10 80.7222517 80.2907651 81.1537384
EOD
$c2 << EOD
1 40.7302177 37.8390837 43.6213518
2 68.0788635 67.5509383 68.6067887
3 71.9941583 71.2107163 72.7776002
4 73.0323951 72.3601524 73.7046378
5 73.3337759 72.5597895 74.1077623
6 74.3082847 73.6409061 74.9756632
7 74.9322889 74.4079224 75.4566554
8 75.3359002 74.7027493 75.969051
9 75.4062666 74.8062087 76.0063245
10 75.4421136 74.8570667 76.0271606
EOD
$c3 << EOD
1 65.1181625 63.9961093 66.2402157
2 76.9516729 75.7627853 78.1405604
3 77.2265003 76.4053933 78.0476072
4 77.8903346 77.0504555 78.7302137
5 78.377589 77.7806727 78.9745052
6 79.0878917 78.491788 79.6839953
7 79.4344132 78.8424457 80.0263807
8 79.6003717 78.9788599 80.2218836
9 79.6163038 78.9939165 80.2386911
10 79.6070101 78.9966996 80.2173206
EOD
$c4 << EOD
1 65.1473712 64.0353049 66.2594376
2 76.9928306 75.824525 78.1611362
3 77.263675 76.4420863 78.0852636
4 77.8836962 77.0752876 78.6921048
5 78.4545937 77.7627664 79.1464211
6 79.1157727 78.4198188 79.8117266
7 79.4224642 78.7255414 80.1193869
8 79.5804567 78.8276427 80.3332707
9 79.5924057 78.8538684 80.3309431
10 79.5910781 78.8525314 80.3296247
EOD
$c5 << EOD
1 63.5820499 62.2349769 64.929123
2 77.7973978 76.9437104 78.6510851
3 77.4176845 76.4947782 78.3405909
4 78.1160382 77.4722733 78.7598031
5 79.0639936 78.4697328 79.6582545
6 79.4476899 78.7882069 80.1071729
7 79.7026022 79.1671714 80.2380331
8 79.8871482 79.3655905 80.4087059
9 79.9123739 79.3524397 80.472308
10 79.9057355 79.3503231 80.461148
EOD
$c6 << EOD
1 65.6465746 64.0464019 67.2467473
2 78.3085502 77.5804195 79.0366809
3 78.3921933 76.9162004 79.8681863
4 78.8011152 78.1837834 79.418447
5 79.6176314 79.0370962 80.1981667
6 79.8884758 79.298603 80.4783486
7 80.3266065 79.6884104 80.9648026
8 80.4075943 79.8798917 80.9352968
9 80.428837 79.8843148 80.9733592
10 80.4394583 79.9050435 80.9738731
EOD
$c7 << EOD
1 66.2878386 64.6524176 67.9232595
2 78.5435475 77.5699953 79.5170998
3 78.2634095 77.1462587 79.3805602
4 78.8648433 78.0323564 79.6973303
5 79.6707382 78.795622 80.5458543
6 80.3478492 79.6145454 81.0811529
7 80.6001062 79.9952823 81.2049301
8 80.704992 80.021732 81.3882521
9 80.7408391 80.0564577 81.4252205
10 80.7395114 80.061893 81.4171299
EOD
if (!exists('svg_out')) svg_out = 'experiments/normalizers/full/plots/curve_newsgroups20.svg'
if (!exists('png_out')) png_out = 'experiments/normalizers/full/plots/curve_newsgroups20.png'
set terminal svg size 880,560 dynamic noenhanced font 'Sans,12' background rgb 'white'
set output svg_out
set title 'newsgroups20: test accuracy per epoch (mean, band ± sd over seeds)'
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
set title 'newsgroups20: test accuracy per epoch (mean, band ± sd over seeds)'
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
