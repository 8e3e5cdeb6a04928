$c1 << EOD
1 18.12 16.8822601 19.3577399
2 23.22 22.3506612 24.0893388
3 22.86 22.2905705 23.4294295
4 22.31 21.6141193 23.0058807
5 21.47 20.4872742 22.4527258
6 21.15 20.8108835 21.4891165
7 20.78 20.4746314 21.0853686
8 20.61 20.1807565 21.0392435
9 20.66 20.3829621 20.9370379
10 20.43 20.2161075 20.6438925
EOD
$c2 << EOD
1 16.19 14.9794216 17.4005784
2 20.38 19.1595493 21.6004507
3 20.25 19.1213947 21.3786053
4 21.58 20.4605135 22.6994865
5 21.48 19.2676483 23.6923517
6 21.14 19.8543095 22.4256905
7 19.83 18.8128963 20.8471037
8 19.58 18.2067739 20.9532261
9 18.86 17.5757687 20.1442313
10 19.09 17.9490574 20.2309426
EOD
$c3 << EOD
1 20.42 19.3583974 21.4816026
2 23.47 22.2954788 24.6445212
3 22.09 21.2650758 22.9149242
4 21.59 21.0615589 22.1184411
5 21.4 20.4896429 22.3103571
6 20.23 19.8290636 20.6309364
7 19.06 18.2542395 19.8657605
8 18.51 18.1575089 18.8624911
9 18.28 17.7270533 18.8329467
10 18.03 17.460351 18.599649
EOD
$c4 << EOD
1 20.4 19.317757 21.482243
2 23.52 22.2727029 24.7672971
3 21.83 21.0997603 22.5602397
4 21.78 21.315511 22.244489
5 20.77 19.9900962 21.5499038
6 19.76 19.1564687 20.3635313
7 19.05 18.2778277 19.8221723
8 18.64 17.956809 19.323191
9 18.43 17.5988863 19.2611137
10 18.26 17.3276642 19.1923358
EOD
$c5 << EOD
1 20.1 18.7398529 21.4601471
2 23.89 22.905495 24.874505
3 23.38 22.3858924 24.3741076
4 22.83 22.3575066 23.3024934
5 21.9 21.696899 22.103101
6 21.18 20.6996356 21.6603644
7 20.61 20.2172533 21.0027467
8 20.29 19.9101974 20.6698026
9 19.94 19.689002 20.190998
10 19.93 19.4036921 20.4563079
EOD
$c6 << EOD
1 20.72 20.2488312 21.1911688
2 24.07 22.9617356 25.1782644
3 23.28 22.6012143 23.9587857
4 21.88 21.3304547 22.4295453
5 21.87 21.3377876 22.4022124
6 21.11 20.649837 21.570163
7 20.85 20.3769778 21.3230222
8 20.38 19.6303334 21.1296666
9 20.33 19.4981346 21.1618654
10 20.06 19.3239633 20.7960367
EOD
$c7 << EOD
1 19.85 18.9782202 20.7217798
2 23.55 22.7594306 24.3405694
3 23.13 22.7401282 23.5198718
4 22.08 21.0884104 23.0715896
5 21.76 20.9997369 22.5202631
6 20.86 20.3233437 21.3966563
7 20.79 20.0755072 21.5044928
8 20.68 20.1755201 21.1844799
9 20.27 19.8095654 20.7304346
10 20.43 19.7736845 21.0863155
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
set output 'experiments/normalizers/full/plots/curve_marker.png'
set title 'marker: test accuracy per epoch (mean, band ± sd over seeds)'
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
