$c1 << EOD
1 19.265 17.5199992 21.0100008
2 23.355 22.2127678 24.4972322
3 22.75 22.2406431 23.2593569
4 22.015 21.2101363 22.8198637
5 21.8 20.9015445 22.6984555
6 21.515 20.9085303 22.1214697
7 21.035 20.6600556 21.4099444
8 20.85 20.2697702 21.4302298
9 20.75 20.4294103 21.0705897
10 20.575 20.2204659 20.9295341
EOD
$c2 << EOD
1 16.55 14.886503 18.213497
2 20.965 19.8348451 22.0951549
3 21.035 19.7317882 22.3382118
4 21.465 20.3569361 22.5730639
5 21.86 20.2958531 23.4241469
6 21.24 20.1327512 22.3472488
7 20.345 19.3234407 21.3665593
8 20.275 18.9751603 21.5748397
9 19.435 18.257892 20.612108
10 19.53 18.4234036 20.6365964
EOD
$c3 << EOD
1 21.035 19.7519806 22.3180194
2 23.145 22.1721891 24.1178109
3 22.63 21.5835244 23.6764756
4 21.62 21.0855221 22.1544779
5 21.415 20.6125558 22.2174442
6 20.16 19.1512053 21.1687947
7 19.385 18.3849861 20.3850139
8 18.58 17.8565054 19.3034946
9 18.485 17.860478 19.109522
10 18.165 17.4411791 18.8888209
EOD
$c4 << EOD
1 21.02 19.7306849 22.3093151
2 23.215 22.1981831 24.2318169
3 22.47 21.2683345 23.6716655
4 21.68 20.8536291 22.5063709
5 21.03 20.0641383 21.9958617
6 20.045 18.999786 21.090214
7 19.275 18.3532716 20.1967284
8 18.645 17.9080958 19.3819042
9 18.46 17.4962688 19.4237312
10 18.33 17.4064802 19.2535198
EOD
$c5 << EOD
1 19.995 18.0457195 21.9442805
2 23.255 22.2596078 24.2503922
3 23.17 22.3412794 23.9987206
4 22.765 22.1347223 23.3952777
5 22.09 21.6658669 22.5141331
6 21.195 20.8190198 21.5709802
7 20.665 20.3185497 21.0114503
8 20.32 19.7483552 20.8916448
9 19.995 19.5810421 20.4089579
10 19.965 19.5061064 20.4238936
EOD
$c6 << EOD
1 21.005 19.7835596 22.2264404
2 23.7 22.7199206 24.6800794
3 22.85 22.0764799 23.6235201
4 22.17 21.3565027 22.9834973
5 21.485 20.8059279 22.1640721
6 20.89 20.2061384 21.5738616
7 20.415 19.7566983 21.0733017
8 19.985 19.1804815 20.7895185
9 19.72 18.8548732 20.5851268
10 19.58 18.7928815 20.3671185
EOD
$c7 << EOD
1 20.7 19.2016676 22.1983324
2 23.4 22.3427499 24.4572501
3 22.725 22.1221134 23.3278866
4 22.205 21.4654619 22.9445381
5 22 21.2461211 22.7538789
6 21.045 20.3903372 21.6996628
7 20.77 20.0600704 21.4799296
8 20.63 20.1543718 21.1056282
9 20.255 19.8093731 20.7006269
10 20.305 19.7216905 20.8883095
EOD
if (!exists('svg_out')) svg_out = 'experiments/normalizers/full/plots/curve_marker.svg'
if (!exists('png_out')) png_out = 'experiments/normalizers/full/plots/curve_marker.png'
set terminal svg size 880,560 dynamic noenhanced font 'Sans,12' background rgb 'white'
set output svg_out
set title 'marker: test accuracy per epoch (mean, band ± sd over seeds)'
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
set title 'marker: test accuracy per epoch (mean, band ± sd over seeds)'
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
