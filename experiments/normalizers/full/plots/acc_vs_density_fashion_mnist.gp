$s1 << EOD
0.997 88.57 1
0.997 88.44 2
0.997 88.79 3
0.997 88.81 4
0.997 89.04 5
EOD
$m1 << EOD
0.997 88.73 0.232271393
EOD
$s2 << EOD
0.179470593 88.04 1
0.179470593 88.51 2
0.179470593 88.34 3
0.179470593 88.29 4
EOD
$m2 << EOD
0.179470593 88.295 0.194336478
EOD
set terminal svg size 880,560 dynamic noenhanced font 'Sans,12' background rgb 'white'
set output 'experiments/normalizers/full/plots/acc_vs_density_fashion_mnist.svg'
set title 'fashion_mnist: test accuracy vs attention support density (5 seeds; squares: mean ± sd)'
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
set title 'fashion_mnist: test accuracy vs attention support density (5 seeds; squares: mean ± sd)'
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
