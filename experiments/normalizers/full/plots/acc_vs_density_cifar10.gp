$s1 << EOD
0.997 59.72 1
0.997 59.49 2
0.997 58.36 3
0.997 58.94 4
0.997 59.07 5
0.997 59 6
0.997 59.38 7
0.997 59.09 8
0.997 59.23 9
0.997 58.6 10
EOD
$m1 << EOD
0.997 59.088 0.403396689
EOD
$s2 << EOD
0.297117659 56.67 1
0.297117659 57.15 2
0.297117659 57.88 3
0.297117659 56.91 4
0.297117659 57.11 5
0.297117659 58.1 6
0.297117659 58.32 7
0.297117659 57.89 8
0.297117659 56.82 9
0.297117659 56.22 10
EOD
$m2 << EOD
0.297117659 57.307 0.696723283
EOD
set terminal svg size 880,560 dynamic noenhanced font 'Sans,12' background rgb 'white'
set output 'experiments/normalizers/full/plots/acc_vs_density_cifar10.svg'
set title 'cifar10: test accuracy vs attention support density (10 seeds; squares: mean ± sd)'
set xlabel 'support density (share of keys with nonzero weight; 1 = dense); normalizers offset by up to ±0.003'
set ylabel 'test accuracy (%)'
set key outside right top
set grid
set xrange [0:1.05]
set offsets 0, 0, graph 0.08, graph 0.08
plot $s1 using 1:2 with points pt 7 ps 0.8 lc rgb '#1f77b4' title 'softmax', \
     $m1 using 1:2:3 with yerrorbars pt 4 ps 2 lw 2 lc rgb '#1f77b4' notitle, \
     $s2 using 1:2 with points pt 15 ps 0.8 lc rgb '#8c564b' title 'topk:0.25', \
     $m2 using 1:2:3 with yerrorbars pt 4 ps 2 lw 2 lc rgb '#8c564b' notitle
unset output
set terminal pngcairo size 880,560 noenhanced font 'Sans,10' background rgb 'white'
set output 'experiments/normalizers/full/plots/acc_vs_density_cifar10.png'
set title 'cifar10: test accuracy vs attention support density (10 seeds; squares: mean ± sd)'
set xlabel 'support density (share of keys with nonzero weight; 1 = dense); normalizers offset by up to ±0.003'
set ylabel 'test accuracy (%)'
set key outside right top
set grid
set xrange [0:1.05]
set offsets 0, 0, graph 0.08, graph 0.08
plot $s1 using 1:2 with points pt 7 ps 0.8 lc rgb '#1f77b4' title 'softmax', \
     $m1 using 1:2:3 with yerrorbars pt 4 ps 2 lw 2 lc rgb '#1f77b4' notitle, \
     $s2 using 1:2 with points pt 15 ps 0.8 lc rgb '#8c564b' title 'topk:0.25', \
     $m2 using 1:2:3 with yerrorbars pt 4 ps 2 lw 2 lc rgb '#8c564b' notitle
unset output
