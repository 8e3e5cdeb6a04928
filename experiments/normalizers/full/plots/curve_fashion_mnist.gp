$c1 << EOD
1 78.934 77.513357 80.354643
2 83.631 83.0901478 84.1718522
3 84.731 84.1613325 85.3006675
4 85.937 85.5150982 86.3589018
5 87.101 86.7238042 87.4781958
6 87.379 87.0248045 87.7331955
7 88.044 87.704484 88.383516
8 88.445 88.1148065 88.7751935
9 88.611 88.398792 88.823208
10 88.658 88.4401417 88.8758583
EOD
$c2 << EOD
1 78.968 77.8823072 80.0536928
2 83.55 82.8424848 84.2575152
3 84.866 84.5601969 85.1718031
4 86.006 85.707962 86.304038
5 86.785 86.4364395 87.1335605
6 87.31 86.7838188 87.8361812
7 87.845 87.525443 88.164557
8 88.265 88.0353989 88.4946011
9 88.439 88.1702395 88.7077605
10 88.491 88.2294045 88.7525955
EOD
$c3 << EOD
1 79.828 79.2286893 80.4273107
2 83.305 82.0669976 84.5430024
3 85.186 84.6324217 85.7395783
4 85.926 85.4149836 86.4370164
5 86.954 86.5629842 87.3450158
6 87.493 87.2958509 87.6901491
7 88.11 87.9117858 88.3082142
8 88.431 88.2862819 88.5757181
9 88.673 88.5476516 88.7983484
10 88.725 88.5998113 88.8501887
EOD
$c4 << EOD
1 80.069 79.4628931 80.6751069
2 83.565 82.5858592 84.5441408
3 85.189 84.7446915 85.6333085
4 86.099 85.6860849 86.5119151
5 87.116 86.7613734 87.4706266
6 87.506 87.1351991 87.8768009
7 88.082 87.8045593 88.3594407
8 88.395 88.2153553 88.5746447
9 88.621 88.4555075 88.7864925
10 88.608 88.4063512 88.8096488
EOD
$c5 << EOD
1 79.627 78.8937265 80.3602735
2 83.763 83.3589084 84.1670916
3 84.845 84.0941745 85.5958255
4 86.053 85.6254475 86.4805525
5 86.803 86.4985497 87.1074503
6 87.188 86.8453697 87.5306303
7 87.84 87.4982399 88.1817601
8 88.069 87.8339846 88.3040154
9 88.229 88.0366779 88.4213221
10 88.307 88.1135489 88.5004511
EOD
$c6 << EOD
1 79.554 78.9405181 80.1674819
2 83.918 83.3956166 84.4403834
3 84.975 84.4995061 85.4504939
4 86.019 85.4445157 86.5934843
5 87 86.6734014 87.3265986
6 87.408 87.1152809 87.7007191
7 87.903 87.4913084 88.3146916
8 88.273 88.0771514 88.4688486
9 88.379 88.1642935 88.5937065
10 88.454 88.2445987 88.6634013
EOD
$c7 << EOD
1 79.479 78.7170952 80.2409048
2 83.831 83.0681625 84.5938375
3 84.965 84.6313918 85.2986082
4 85.904 85.3036631 86.5043369
5 87.033 86.6242607 87.4417393
6 87.427 86.9695906 87.8844094
7 87.97 87.6939163 88.2460837
8 88.37 88.1158347 88.6241653
9 88.527 88.2839614 88.7700386
10 88.563 88.3632196 88.7627804
EOD
if (!exists('svg_out')) svg_out = 'experiments/normalizers/full/plots/curve_fashion_mnist.svg'
if (!exists('png_out')) png_out = 'experiments/normalizers/full/plots/curve_fashion_mnist.png'
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
set title 'fashion_mnist: test accuracy per epoch (mean, band ± sd over seeds)'
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
