$c1 << EOD
1 79.19 77.3536994 81.0263006
2 83.766 83.2153368 84.3166632
3 84.522 83.8447113 85.1992887
4 85.918 85.4081275 86.4278725
5 87.24 86.8452216 87.6347784
6 87.272 86.8074357 87.7365643
7 88.128 87.8721289 88.3838711
8 88.552 88.108187 88.995813
9 88.642 88.3907631 88.8932369
10 88.73 88.4977286 88.9622714
EOD
$c2 << EOD
1 79.9625 79.4783254 80.4466746
2 83.6775 83.255254 84.099746
3 84.7825 83.9718059 85.5931941
4 86.06 85.6745133 86.4454867
5 86.5875 86.3959493 86.7790507
6 87.03 86.7095836 87.3504164
7 87.8975 87.6013722 88.1936278
8 88.0325 87.7556878 88.3093122
9 88.2175 88.0463519 88.3886481
10 88.295 88.1006635 88.4893365
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
     $c1 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#1f77b4' title 'softmax (5 seeds)', \
     $c2 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#ff7f0e' notitle, \
     $c2 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#ff7f0e' title 'topk:0.125 (4 seeds)'
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
     $c1 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#1f77b4' title 'softmax (5 seeds)', \
     $c2 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#ff7f0e' notitle, \
     $c2 using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#ff7f0e' title 'topk:0.125 (4 seeds)'
unset output
