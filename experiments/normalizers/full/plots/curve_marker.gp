$c1 << EOD
1 17.3666667 16.9047865 17.8285469
2 23.3333333 23.1805808 23.4860859
3 22.7333333 22.1986995 23.2679672
4 22.6333333 22.0848506 23.1818161
5 21.3 20.3659229 22.2340771
6 21.2166667 20.7798219 21.6535114
7 20.9833333 20.8077391 21.1589276
8 20.6833333 20.1486995 21.2179672
9 20.65 20.2594875 21.0405125
10 20.4666667 20.1736934 20.7596399
EOD
$c2 << EOD
1 16.5833333 15.9581667 17.2085
2 20.6333333 20.053822 21.2128446
3 20.6833333 19.5863678 21.7802988
4 21.9 21.0738644 22.7261356
5 20.9166667 20.3393164 21.4940169
6 20.8666667 20.4981109 21.2352224
7 19.7333333 19.6755983 19.7910684
8 19 18.6721281 19.3278719
9 18.1 17.3450166 18.8549834
10 18.5333333 17.9986995 19.0679672
EOD
$c3 << EOD
1 20.7333333 19.3600769 22.1065898
2 23.8833333 23.7575028 24.0091639
3 21.9166667 20.8094931 23.0238402
4 21.7 21.2727998 22.1272002
5 21.7666667 20.8442604 22.6890729
6 20.2666667 19.7320328 20.8013005
7 19.2166667 18.6243548 19.8089785
8 18.6166667 18.2094403 19.0238931
9 18.6333333 18.4023932 18.8642734
10 18.4166667 18.1236934 18.7096399
EOD
$c4 << EOD
1 20.75 19.379781 22.120219
2 23.8833333 23.5147776 24.2518891
3 21.5666667 20.6773786 22.4559548
4 21.55 21.1 22
5 20.8666667 19.7938977 21.9394357
6 19.7833333 19.0179358 20.5487308
7 19.35 18.4375856 20.2624144
8 18.6666667 17.8415404 19.4917929
9 18.6333333 17.6868486 19.5798181
10 18.4333333 17.3082407 19.5584259
EOD
$c5 << EOD
1 19.8 17.9669697 21.6330303
2 24.1333333 22.8349369 25.4317298
3 23.6 22.9126136 24.2873864
4 23.0833333 22.6296447 23.5370219
5 21.8666667 21.5912881 22.1420452
6 21.0333333 20.8889958 21.1776709
7 20.5333333 20.208013 20.8586537
8 20.3666667 19.8810399 20.8522934
9 20.0333333 19.7319476 20.334719
10 20.2333333 19.7824084 20.6842583
EOD
$c6 << EOD
1 20.7666667 20.1375138 21.3958195
2 24.6666667 23.696701 25.6366323
3 23 22.3855897 23.6144103
4 21.9333333 21.2047502 22.6619164
5 21.5 21.2708712 21.7291288
6 21.1 20.4616427 21.7383573
7 20.5166667 20.3410724 20.6922609
8 20.2 19.3325324 21.0674676
9 20.2166667 19.2288239 21.2045094
10 20.05 19.1 21
EOD
$c7 << EOD
1 19.2833333 18.780011 19.7866556
2 23.9833333 23.2462219 24.7204448
3 22.9166667 22.5837503 23.2495831
4 22.2166667 20.8915881 23.5417453
5 21.2333333 21.0726058 21.3940608
6 20.7 20.0755002 21.3244998
7 20.75 19.7740389 21.7259611
8 20.5 19.9105087 21.0894913
9 20.0833333 19.5629168 20.6037498
10 20.1333333 19.4047502 20.8619164
EOD
set terminal svg size 880,560 dynamic noenhanced font 'Sans,12' background rgb 'white'
set output 'experiments/normalizers/full/plots/curve_marker.svg'
set title 'marker: test accuracy per epoch (mean, band ± sd over seeds)'
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
     $c3 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#2ca02c' title 'entmax15 (3 seeds)', \
     $c4 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#9467bd' notitle, \
     $c4 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#9467bd' title 'hae (3 seeds)', \
     $c5 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#ff7f0e' notitle, \
     $c5 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#ff7f0e' title 'topk:0.125 (3 seeds)', \
     $c6 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#8c564b' notitle, \
     $c6 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#8c564b' title 'topk:0.25 (3 seeds)', \
     $c7 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#e377c2' notitle, \
     $c7 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#e377c2' title 'topk:0.5 (3 seeds)'
unset output
set terminal pngcairo size 880,560 noenhanced font 'Sans,10' background rgb 'white'
set output 'experiments/normalizers/full/plots/curve_marker.png'
set title 'marker: test accuracy per epoch (mean, band ± sd over seeds)'
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
     $c3 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#2ca02c' title 'entmax15 (3 seeds)', \
     $c4 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#9467bd' notitle, \
     $c4 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#9467bd' title 'hae (3 seeds)', \
     $c5 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#ff7f0e' notitle, \
     $c5 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#ff7f0e' title 'topk:0.125 (3 seeds)', \
     $c6 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#8c564b' notitle, \
     $c6 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#8c564b' title 'topk:0.25 (3 seeds)', \
     $c7 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#e377c2' notitle, \
     $c7 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#e377c2' title 'topk:0.5 (3 seeds)'
unset output
