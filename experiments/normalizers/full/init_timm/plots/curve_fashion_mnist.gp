$c1 << EOD
1 77.254 76.421696 78.086304
2 82.712 82.4257833 82.9982167
3 83.536 82.488608 84.583392
4 84.714 83.9070737 85.5209263
5 85.774 85.4532509 86.0947491
6 86.21 85.804414 86.615586
7 87.112 86.6822094 87.5417906
8 87.252 86.9979921 87.5060079
9 87.578 87.368429 87.787571
10 87.692 87.4300458 87.9539542
EOD
$c2 << EOD
1 77.306 77.0061167 77.6058833
2 82.756 82.1962411 83.3157589
3 83.822 83.2133786 84.4306214
4 84.702 83.8080649 85.5959351
5 86.152 85.9527012 86.3512988
6 86.296 85.9520087 86.6399913
7 87.046 86.6476534 87.4443466
8 87.436 87.2508514 87.6211486
9 87.756 87.5600919 87.9519081
10 87.78 87.6123695 87.9476305
EOD
$c3 << EOD
1 77.872 76.6433544 79.1006456
2 82.922 82.2207012 83.6232988
3 83.678 82.8727236 84.4832764
4 84.416 84.2862695 84.5457305
5 85.878 85.5640414 86.1919586
6 86.294 86.0421469 86.5458531
7 86.854 86.6569467 87.0510533
8 87.288 87.0065395 87.5694605
9 87.45 87.319233 87.580767
10 87.518 87.4004415 87.6355585
EOD
$c4 << EOD
1 78.212 76.8284466 79.5955534
2 83.01 82.4281065 83.5918935
3 84.012 83.3531222 84.6708778
4 85.024 84.5703151 85.4776849
5 85.888 85.5567599 86.2192401
6 86.39 86.2076542 86.5723458
7 87.064 86.5372838 87.5907162
8 87.402 87.0490552 87.7549448
9 87.548 87.1165837 87.9794163
10 87.626 87.2662362 87.9857638
EOD
set terminal svg size 880,560 dynamic noenhanced font 'Sans,12' background rgb 'white'
set output 'experiments/normalizers/full/init_timm/plots/curve_fashion_mnist.svg'
set title 'fashion_mnist: test accuracy per epoch (mean, band ± sd over seeds)'
set xlabel 'epoch'
set ylabel 'test accuracy (%)'
set key outside right top
set grid
set xrange [1:10]
set xtics 1
plot $c1 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#1f77b4' notitle, \
     $c1 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#1f77b4' title 'softmax (5 seeds)', \
     $c2 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#2ca02c' notitle, \
     $c2 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#2ca02c' title 'entmax15 (5 seeds)', \
     $c3 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#ff7f0e' notitle, \
     $c3 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#ff7f0e' title 'topk:0.125 (5 seeds)', \
     $c4 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#8c564b' notitle, \
     $c4 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#8c564b' title 'topk:0.25 (5 seeds)'
unset output
set terminal pngcairo size 880,560 noenhanced font 'Sans,10' background rgb 'white'
set output 'experiments/normalizers/full/init_timm/plots/curve_fashion_mnist.png'
set title 'fashion_mnist: test accuracy per epoch (mean, band ± sd over seeds)'
set xlabel 'epoch'
set ylabel 'test accuracy (%)'
set key outside right top
set grid
set xrange [1:10]
set xtics 1
plot $c1 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#1f77b4' notitle, \
     $c1 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#1f77b4' title 'softmax (5 seeds)', \
     $c2 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#2ca02c' notitle, \
     $c2 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#2ca02c' title 'entmax15 (5 seeds)', \
     $c3 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#ff7f0e' notitle, \
     $c3 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#ff7f0e' title 'topk:0.125 (5 seeds)', \
     $c4 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#8c564b' notitle, \
     $c4 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#8c564b' title 'topk:0.25 (5 seeds)'
unset output
