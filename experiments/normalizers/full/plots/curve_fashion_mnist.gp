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
set terminal svg size 880,560 dynamic noenhanced font 'Sans,12' background rgb 'white'
set output 'experiments/normalizers/full/plots/curve_fashion_mnist.svg'
set title 'fashion_mnist: test accuracy per epoch (mean, band ± sd over seeds)'
set xlabel 'epoch'
set ylabel 'test accuracy (%)'
set key outside right top
set grid
set xrange [1:10]
set xtics 1
plot $c1 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#1f77b4' notitle, \
     $c1 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#1f77b4' title 'softmax (10 seeds)', \
     $c2 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#ff7f0e' notitle, \
     $c2 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#ff7f0e' title 'topk:0.125 (10 seeds)'
unset output
set terminal pngcairo size 880,560 noenhanced font 'Sans,10' background rgb 'white'
set output 'experiments/normalizers/full/plots/curve_fashion_mnist.png'
set title 'fashion_mnist: test accuracy per epoch (mean, band ± sd over seeds)'
set xlabel 'epoch'
set ylabel 'test accuracy (%)'
set key outside right top
set grid
set xrange [1:10]
set xtics 1
plot $c1 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#1f77b4' notitle, \
     $c1 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#1f77b4' title 'softmax (10 seeds)', \
     $c2 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#ff7f0e' notitle, \
     $c2 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#ff7f0e' title 'topk:0.125 (10 seeds)'
unset output
