$c1 << EOD
1 22.685 21.2951459 24.0748541
2 33.59 31.7471761 35.4328239
3 43.36 40.8885182 45.8314818
4 49.865 47.3080867 52.4219133
5 56.765 55.1891316 58.3408684
6 61.24 60.0549543 62.4250457
7 63.975 62.6457876 65.3042124
8 65.415 64.1298173 66.7001827
9 66.63 65.5236547 67.7363453
10 66.945 65.8995203 67.9904797
EOD
$c2 << EOD
1 27.125 24.446355 29.803645
2 40.76 38.0786032 43.4413968
3 51.795 50.5273578 53.0626422
4 58.7 57.4523355 59.9476645
5 63.415 62.052802 64.777198
6 66.75 65.3037405 68.1962595
7 69.345 68.1407367 70.5492633
8 70.685 70.0377623 71.3322377
9 71.91 70.9311117 72.8888883
10 72.175 71.3237754 73.0262246
EOD
$c3 << EOD
1 23.89 21.5576431 26.2223569
2 37.07 35.6445956 38.4954044
3 47.475 44.837319 50.112681
4 55.435 54.0577947 56.8122053
5 60.61 59.2374922 61.9825078
6 64.55 63.6472265 65.4527735
7 67.15 66.1086334 68.1913666
8 68.705 67.634058 69.775942
9 69.905 68.8157979 70.9942021
10 70.215 69.29484 71.13516
EOD
$c4 << EOD
1 23.865 21.5569164 26.1730836
2 36.78 34.4120191 39.1479809
3 48.14 46.4359525 49.8440475
4 56.05 54.8574304 57.2425696
5 61.18 59.1849784 63.1750216
6 64.525 63.1317125 65.9182875
7 66.995 65.3959638 68.5940362
8 68.685 67.3972263 69.9727737
9 69.85 68.662098 71.037902
10 70.075 68.6277325 71.5222675
EOD
$c5 << EOD
1 26.775 25.0213926 28.5286074
2 39.18 37.1760872 41.1839128
3 48.58 46.6793861 50.4806139
4 54.35 52.4577644 56.2422356
5 58.73 57.3501449 60.1098551
6 61.805 60.3834496 63.2265504
7 63.6 62.2262379 64.9737621
8 64.92 63.4879851 66.3520149
9 65.34 63.7845794 66.8954206
10 65.585 64.0491235 67.1208765
EOD
$c6 << EOD
1 26.8 25.0881135 28.5118865
2 40.48 37.8554154 43.1045846
3 49.25 46.9469827 51.5530173
4 56.62 54.9640008 58.2759992
5 60.895 60.0076037 61.7823963
6 63.95 62.5521842 65.3478158
7 65.97 64.52351 67.41649
8 67.22 66.1073954 68.3326046
9 68.145 66.6858431 69.6041569
10 68.41 67.0170016 69.8029984
EOD
$c7 << EOD
1 26.47 25.1809004 27.7590996
2 37.295 35.1807034 39.4092966
3 48.52 46.1546013 50.8853987
4 56.085 54.0936228 58.0763772
5 60.4 59.6580057 61.1419943
6 63.46 62.414693 64.505307
7 66.235 65.1965583 67.2734417
8 67.5 67.0609353 67.9390647
9 68.695 68.0915608 69.2984392
10 68.89 68.3273673 69.4526327
EOD
if (!exists('svg_out')) svg_out = 'experiments/normalizers/kmnist_2core/plots/curve_kmnist.svg'
if (!exists('png_out')) png_out = 'experiments/normalizers/kmnist_2core/plots/curve_kmnist.png'
set terminal svg size 880,560 dynamic noenhanced font 'Sans,12' background rgb 'white'
set output svg_out
set title 'kmnist: test accuracy per epoch (mean, band ± sd over seeds)'
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
set title 'kmnist: test accuracy per epoch (mean, band ± sd over seeds)'
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
