$s1 << EOD
0.997 79.1 1
0.997 81.95 2
0.997 81.05 3
0.997 81.25 4
0.997 80.4 5
0.997 80.35 6
0.997 81.45 7
0.997 80.25 8
0.997 80.35 9
0.997 80.2 10
EOD
$m1 << EOD
0.997 80.635 0.806587462
EOD
$s2 << EOD
0.297117659 77.3 1
0.297117659 79.95 2
0.297117659 77.3 3
0.297117659 79 4
0.297117659 79.3 5
0.297117659 80.2 6
0.297117659 78.75 7
0.297117659 80.5 8
0.297117659 79.65 9
0.297117659 79.55 10
EOD
$m2 << EOD
0.297117659 79.15 1.10679718
EOD
set terminal svg size 880,560 dynamic noenhanced font 'Sans,12' background rgb 'white'
set output 'experiments/normalizers/full/plots/acc_vs_density_kmnist.svg'
set title 'kmnist: test accuracy vs attention support density (10 seeds; squares: mean ± sd)'
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
set output 'experiments/normalizers/full/plots/acc_vs_density_kmnist.png'
set title 'kmnist: test accuracy vs attention support density (10 seeds; squares: mean ± sd)'
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
