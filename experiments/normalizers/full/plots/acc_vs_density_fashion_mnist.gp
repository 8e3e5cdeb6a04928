$s1 << EOD
0.997 88.57 1
0.997 88.44 2
0.997 88.79 3
0.997 88.81 4
0.997 89.04 5
0.997 88.74 6
0.997 88.68 7
0.997 88.24 8
0.997 88.6 9
0.997 88.67 10
EOD
$m1 << EOD
0.997 88.658 0.217858262
EOD
$s2 << EOD
0.179470593 88.04 1
0.179470593 88.51 2
0.179470593 88.34 3
0.179470593 88.29 4
0.179470593 88.24 5
0.179470593 88.37 6
0.179470593 88.62 7
0.179470593 87.99 8
0.179470593 88.25 9
0.179470593 88.42 10
EOD
$m2 << EOD
0.179470593 88.307 0.193451114
EOD
set terminal svg size 880,560 dynamic noenhanced font 'Sans,12' background rgb 'white'
set output 'experiments/normalizers/full/plots/acc_vs_density_fashion_mnist.svg'
set title 'fashion_mnist: test accuracy vs attention support density (10 seeds; squares: mean ± sd)'
set xlabel 'support density (share of keys with nonzero weight; 1 = dense); normalizers offset by up to ±0.003'
set ylabel 'test accuracy (%)'
set key outside right top
set grid
set xrange [0:1.05]
set offsets 0, 0, graph 0.08, graph 0.08
plot $s1 using 1:2 with points pt 7 ps 0.8 lc rgb '#1f77b4' title 'softmax', \
     $m1 using 1:2:3 with yerrorbars pt 4 ps 2 lw 2 lc rgb '#1f77b4' notitle, \
     $s2 using 1:2 with points pt 13 ps 0.8 lc rgb '#ff7f0e' title 'topk:0.125', \
     $m2 using 1:2:3 with yerrorbars pt 4 ps 2 lw 2 lc rgb '#ff7f0e' notitle
unset output
set terminal pngcairo size 880,560 noenhanced font 'Sans,10' background rgb 'white'
set output 'experiments/normalizers/full/plots/acc_vs_density_fashion_mnist.png'
set title 'fashion_mnist: test accuracy vs attention support density (10 seeds; squares: mean ± sd)'
set xlabel 'support density (share of keys with nonzero weight; 1 = dense); normalizers offset by up to ±0.003'
set ylabel 'test accuracy (%)'
set key outside right top
set grid
set xrange [0:1.05]
set offsets 0, 0, graph 0.08, graph 0.08
plot $s1 using 1:2 with points pt 7 ps 0.8 lc rgb '#1f77b4' title 'softmax', \
     $m1 using 1:2:3 with yerrorbars pt 4 ps 2 lw 2 lc rgb '#1f77b4' notitle, \
     $s2 using 1:2 with points pt 13 ps 0.8 lc rgb '#ff7f0e' title 'topk:0.125', \
     $m2 using 1:2:3 with yerrorbars pt 4 ps 2 lw 2 lc rgb '#ff7f0e' notitle
unset output
