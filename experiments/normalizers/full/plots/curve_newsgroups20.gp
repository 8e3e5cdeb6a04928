$c1 << EOD
1 65.3876792 64.1687883 66.6065701
2 78.1917153 77.0034482 79.3799825
3 78.2209241 76.9756516 79.4661965
4 78.4625597 77.4799325 79.445187
5 79.6601168 79.2424812 80.0777525
6 80.2761551 79.7111857 80.8411245
7 80.2655337 79.7800171 80.7510504
8 80.708975 80.3720505 81.0458996
9 80.7673925 80.4121822 81.1226027
10 80.7461498 80.4006497 81.0916498
EOD
$c2 << EOD
1 40.5974509 37.4593129 43.7355888
2 67.8438662 67.2798023 68.4079301
3 71.8056293 70.9608835 72.6503751
4 72.8597982 72.1689383 73.5506581
5 72.9633563 72.2099936 73.7167191
6 74.2060542 73.3328963 75.0792121
7 74.7583643 74.0586313 75.4580973
8 75.212427 74.3785813 76.0462726
9 75.2867764 74.5191589 76.054394
10 75.3159851 74.5769255 76.0550447
EOD
$c3 << EOD
1 64.6654275 63.6455136 65.6853415
2 76.6861391 75.8949779 77.4773004
3 77.267658 76.4671168 78.0681992
4 77.9580457 77.419611 78.4964804
5 78.5289432 77.9340498 79.1238365
6 79.2644716 78.9367767 79.5921665
7 79.3919278 78.9875442 79.7963113
8 79.6919809 79.3525025 80.0314593
9 79.7291556 79.3664809 80.0918303
10 79.7052576 79.330488 80.0800272
EOD
$c4 << EOD
1 64.7211896 63.6965855 65.7457937
2 76.7604886 75.9879497 77.5330275
3 77.3048327 76.4864244 78.1232411
4 77.9394583 77.5134029 78.3655138
5 78.6776421 77.8071834 79.5481007
6 79.4052045 79.0294015 79.7810074
7 79.5459373 78.9997667 80.092108
8 79.7769517 79.1558212 80.3980821
9 79.7981944 79.202472 80.3939168
10 79.7981944 79.2043242 80.3920646
EOD
$c5 << EOD
1 63.2395114 62.2518295 64.2271934
2 77.5650558 76.8360823 78.2940293
3 77.480085 76.6867877 78.2733822
4 77.9899097 77.1762644 78.803555
5 78.882103 78.4077889 79.3564172
6 79.3680297 79.0137636 79.7222959
7 79.6176314 79.3995945 79.8356684
8 79.8327138 79.6240543 80.0413733
9 79.8964418 79.6241241 80.1687596
10 79.8911312 79.6599109 80.1223514
EOD
$c6 << EOD
1 64.763675 63.4173182 66.1100318
2 78.385555 77.9191671 78.8519429
3 78.4545937 76.3206085 80.5885789
4 78.866171 78.5489999 79.1833421
5 79.8751992 79.5070972 80.2433011
6 79.9893787 79.7998891 80.1788682
7 80.3584705 79.8979207 80.8190204
8 80.5151354 80.3598493 80.6704216
9 80.5390335 80.3725711 80.7054958
10 80.5496548 80.3991532 80.7001565
EOD
$c7 << EOD
1 65.708975 64.2119028 67.2060472
2 79.0573553 78.2340616 79.880649
3 78.9060011 78.2159709 79.5960312
4 78.9909719 78.1289785 79.8529652
5 79.9150292 79.2056639 80.6243945
6 80.5762082 79.9310241 81.2213923
7 80.6001062 80.0297184 81.170494
8 80.7620818 80.0693364 81.4548272
9 80.8390866 80.1718489 81.5063243
10 80.8311206 80.1658672 81.4963739
EOD
set terminal svg size 880,560 dynamic noenhanced font 'Sans,12' background rgb 'white'
set output 'experiments/normalizers/full/plots/curve_newsgroups20.svg'
set title 'newsgroups20: test accuracy per epoch (mean, band ± sd over seeds)'
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
set output 'experiments/normalizers/full/plots/curve_newsgroups20.png'
set title 'newsgroups20: test accuracy per epoch (mean, band ± sd over seeds)'
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
