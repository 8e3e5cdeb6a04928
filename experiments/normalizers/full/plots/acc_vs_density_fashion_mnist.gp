$s1 << EOD
0.982 88.57 1
0.982 88.44 2
0.982 88.79 3
0.982 88.81 4
0.982 89.04 5
0.982 88.74 6
0.982 88.68 7
0.982 88.24 8
0.982 88.6 9
0.982 88.67 10
EOD
$m1 << EOD
0.982 88.658 0.217858262
EOD
$s2 << EOD
0.246549782 88.58 1
0.249336675 88.46 2
0.243568385 88.88 3
0.255744374 88.16 4
0.252328204 88.34 5
0.238636809 88.91 6
0.254052898 88.55 7
0.246714445 88.2 8
0.24409987 88.26 9
0.238759993 88.57 10
EOD
$m2 << EOD
0.246979143 88.491 0.261595532
EOD
$s3 << EOD
0.598354352 88.85 1
0.61420307 88.82 2
0.629669634 88.86 3
0.637294327 88.84 4
0.637514283 88.7 5
0.600606394 88.71 6
0.607936119 88.65 7
0.589405236 88.74 8
0.583800131 88.47 9
0.619079967 88.61 10
EOD
$m3 << EOD
0.611786351 88.725 0.125188746
EOD
$s4 << EOD
0.637219943 88.53 1
0.634716742 88.73 2
0.666201912 89.01 3
0.656931564 88.51 4
0.663059518 88.83 5
0.59356479 88.54 6
0.658482693 88.38 7
0.643800519 88.65 8
0.611745894 88.36 9
0.658118762 88.54 10
EOD
$m4 << EOD
0.642384234 88.608 0.20164876
EOD
$s5 << EOD
0.182470593 88.04 1
0.182470593 88.51 2
0.182470593 88.34 3
0.182470593 88.29 4
0.182470593 88.24 5
0.182470593 88.37 6
0.182470593 88.62 7
0.182470593 87.99 8
0.182470593 88.25 9
0.182470593 88.42 10
EOD
$m5 << EOD
0.182470593 88.307 0.193451114
EOD
$s6 << EOD
0.306117659 88.47 1
0.306117659 88.36 2
0.306117659 88.24 3
0.306117659 88.65 4
0.306117659 88.61 5
0.306117659 88.43 6
0.306117659 88.47 7
0.306117659 88.36 8
0.306117659 88.11 9
0.306117659 88.84 10
EOD
$m6 << EOD
0.306117659 88.454 0.209401263
EOD
$s7 << EOD
0.547411793 88.73 1
0.547411793 88.87 2
0.547411793 88.68 3
0.547411793 88.18 4
0.547411793 88.59 5
0.547411793 88.54 6
0.547411793 88.52 7
0.547411793 88.66 8
0.547411793 88.31 9
0.547411793 88.55 10
EOD
$m7 << EOD
0.547411793 88.563 0.199780435
EOD
if (!exists('svg_out')) svg_out = 'experiments/normalizers/full/plots/acc_vs_density_fashion_mnist.svg'
if (!exists('png_out')) png_out = 'experiments/normalizers/full/plots/acc_vs_density_fashion_mnist.png'
set terminal svg size 880,560 dynamic noenhanced font 'Sans,12' background rgb 'white'
set output svg_out
set title 'fashion_mnist: test accuracy vs attention support density (10 seeds; squares: mean ± sd)'
set xlabel 'support density (share of keys with nonzero weight; 1 = dense); normalizers offset by up to ±0.018'
set ylabel 'test accuracy (%)'
set key outside right top
set grid
set xrange [0:1.05]
set offsets 0, 0, graph 0.08, graph 0.08
plot $s1 using 1:2 with points pt 7 ps 0.8 lc rgb '#1f77b4' title 'softmax', \
     $m1 using 1:2:3 with yerrorbars pt 4 ps 2 lw 2 lc rgb '#1f77b4' notitle, \
     $s2 using 1:2 with points pt 9 ps 0.8 lc rgb '#d62728' title 'sparsemax', \
     $m2 using 1:2:3 with yerrorbars pt 4 ps 2 lw 2 lc rgb '#d62728' notitle, \
     $s3 using 1:2 with points pt 5 ps 0.8 lc rgb '#2ca02c' title 'entmax15', \
     $m3 using 1:2:3 with yerrorbars pt 4 ps 2 lw 2 lc rgb '#2ca02c' notitle, \
     $s4 using 1:2 with points pt 11 ps 0.8 lc rgb '#9467bd' title 'hae', \
     $m4 using 1:2:3 with yerrorbars pt 4 ps 2 lw 2 lc rgb '#9467bd' notitle, \
     $s5 using 1:2 with points pt 13 ps 0.8 lc rgb '#ff7f0e' title 'topk:0.125', \
     $m5 using 1:2:3 with yerrorbars pt 4 ps 2 lw 2 lc rgb '#ff7f0e' notitle, \
     $s6 using 1:2 with points pt 15 ps 0.8 lc rgb '#8c564b' title 'topk:0.25', \
     $m6 using 1:2:3 with yerrorbars pt 4 ps 2 lw 2 lc rgb '#8c564b' notitle, \
     $s7 using 1:2 with points pt 3 ps 0.8 lc rgb '#e377c2' title 'topk:0.5', \
     $m7 using 1:2:3 with yerrorbars pt 4 ps 2 lw 2 lc rgb '#e377c2' notitle
unset output
set terminal pngcairo size 880,560 noenhanced font 'Sans,10' background rgb 'white'
set output png_out
set title 'fashion_mnist: test accuracy vs attention support density (10 seeds; squares: mean ± sd)'
set xlabel 'support density (share of keys with nonzero weight; 1 = dense); normalizers offset by up to ±0.018'
set ylabel 'test accuracy (%)'
set key outside right top
set grid
set xrange [0:1.05]
set offsets 0, 0, graph 0.08, graph 0.08
plot $s1 using 1:2 with points pt 7 ps 0.8 lc rgb '#1f77b4' title 'softmax', \
     $m1 using 1:2:3 with yerrorbars pt 4 ps 2 lw 2 lc rgb '#1f77b4' notitle, \
     $s2 using 1:2 with points pt 9 ps 0.8 lc rgb '#d62728' title 'sparsemax', \
     $m2 using 1:2:3 with yerrorbars pt 4 ps 2 lw 2 lc rgb '#d62728' notitle, \
     $s3 using 1:2 with points pt 5 ps 0.8 lc rgb '#2ca02c' title 'entmax15', \
     $m3 using 1:2:3 with yerrorbars pt 4 ps 2 lw 2 lc rgb '#2ca02c' notitle, \
     $s4 using 1:2 with points pt 11 ps 0.8 lc rgb '#9467bd' title 'hae', \
     $m4 using 1:2:3 with yerrorbars pt 4 ps 2 lw 2 lc rgb '#9467bd' notitle, \
     $s5 using 1:2 with points pt 13 ps 0.8 lc rgb '#ff7f0e' title 'topk:0.125', \
     $m5 using 1:2:3 with yerrorbars pt 4 ps 2 lw 2 lc rgb '#ff7f0e' notitle, \
     $s6 using 1:2 with points pt 15 ps 0.8 lc rgb '#8c564b' title 'topk:0.25', \
     $m6 using 1:2:3 with yerrorbars pt 4 ps 2 lw 2 lc rgb '#8c564b' notitle, \
     $s7 using 1:2 with points pt 3 ps 0.8 lc rgb '#e377c2' title 'topk:0.5', \
     $m7 using 1:2:3 with yerrorbars pt 4 ps 2 lw 2 lc rgb '#e377c2' notitle
unset output
