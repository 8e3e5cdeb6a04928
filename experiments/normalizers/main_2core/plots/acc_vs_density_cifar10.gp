$s1 << EOD
0.982 37.46 1
0.982 37.54 2
0.982 36.94 3
0.982 37.46 4
0.982 37.29 5
0.982 37.09 6
0.982 36.84 7
0.982 37.62 8
0.982 37.87 9
0.982 37.11 10
EOD
$m1 << EOD
0.982 37.322 0.325364753
EOD
$s2 << EOD
0.825119713 38.76 1
0.864504369 39.21 2
0.842153335 39.55 3
0.852394374 39.65 4
0.853884818 37.8 5
0.824522542 38.49 6
0.833736265 39.8 7
0.816260116 39.02 8
0.85993884 39.34 9
0.847184697 39.36 10
EOD
$m2 << EOD
0.841969907 39.098 0.607029196
EOD
$s3 << EOD
0.984545385 39.03 1
0.985198346 37.83 2
0.980441523 38.78 3
0.982811344 38.29 4
0.980471288 37.89 5
0.978398961 38.36 6
0.979479154 38.64 7
0.979910639 38.44 8
0.982966875 38.76 9
0.982687679 38.22 10
EOD
$m3 << EOD
0.981691119 38.424 0.388077885
EOD
$s4 << EOD
0.990353853 38.99 1
0.99106171 37.87 2
0.985912278 38.79 3
0.988486335 38.28 4
0.986170545 37.94 5
0.984777637 38.32 6
0.985237628 38.65 7
0.985999316 38.44 8
0.988722011 38.74 9
0.988508768 38.23 10
EOD
$m4 << EOD
0.987523008 38.425 0.367551962
EOD
$s5 << EOD
0.182470593 36.42 1
0.182470593 37.08 2
0.182470593 36.78 3
0.182470593 38.19 4
0.182470593 36.95 5
0.182470593 36.86 6
0.182470593 38.34 7
0.182470593 36.24 8
0.182470593 37.2 9
0.182470593 36.63 10
EOD
$m5 << EOD
0.182470593 37.069 0.693773098
EOD
$s6 << EOD
0.306117659 36.84 1
0.306117659 37.66 2
0.306117659 37.59 3
0.306117659 38.39 4
0.306117659 37.89 5
0.306117659 37.62 6
0.306117659 38.7 7
0.306117659 36.94 8
0.306117659 38.23 9
0.306117659 38.52 10
EOD
$m6 << EOD
0.306117659 37.838 0.633540317
EOD
$s7 << EOD
0.547411793 39 1
0.547411793 38.21 2
0.547411793 38.76 3
0.547411793 37.98 4
0.547411793 37.44 5
0.547411793 38.09 6
0.547411793 38.34 7
0.547411793 38.37 8
0.547411793 38.39 9
0.547411793 37.95 10
EOD
$m7 << EOD
0.547411793 38.253 0.435993119
EOD
if (!exists('svg_out')) svg_out = 'experiments/normalizers/main_2core/plots/acc_vs_density_cifar10.svg'
if (!exists('png_out')) png_out = 'experiments/normalizers/main_2core/plots/acc_vs_density_cifar10.png'
set terminal svg size 880,560 dynamic noenhanced font 'Sans,12' background rgb 'white'
set output svg_out
set title 'cifar10: test accuracy vs attention support density (10 seeds; squares: mean ± sd)'
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
set title 'cifar10: test accuracy vs attention support density (10 seeds; squares: mean ± sd)'
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
