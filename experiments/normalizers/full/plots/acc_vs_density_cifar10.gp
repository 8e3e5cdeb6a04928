$s1 << EOD
0.982 59.72 1
0.982 59.49 2
0.982 58.36 3
0.982 58.94 4
0.982 59.07 5
0.982 59 6
0.982 59.38 7
0.982 59.09 8
0.982 59.23 9
0.982 58.6 10
EOD
$m1 << EOD
0.982 59.088 0.403396689
EOD
$s2 << EOD
0.369367251 57.46 1
0.324633697 56.11 2
0.366838059 57.69 3
0.344969815 56.48 4
0.357000562 56.86 5
0.365610084 57.11 6
0.37534987 57.33 7
0.367556492 56.77 8
0.378459906 56.76 9
0.379181231 57.05 10
EOD
$m2 << EOD
0.362896697 56.962 0.470148913
EOD
$s3 << EOD
0.7947093 58.99 1
0.79560398 58.22 2
0.770234388 58.26 3
0.765194987 58.03 4
0.759536338 58.79 5
0.782697965 58.45 6
0.808265668 58.32 7
0.765448396 59.39 8
0.773508516 57.07 9
0.803021533 56.84 10
EOD
$m3 << EOD
0.781822107 58.236 0.789630012
EOD
$s4 << EOD
0.82906843 59.11 1
0.833083086 58.49 2
0.803976469 58.17 3
0.799001507 58.07 4
0.789502725 58.8 5
0.815714143 58.53 6
0.84005554 58.55 7
0.799693301 59.5 8
0.805095553 57.14 9
0.831288494 56.92 10
EOD
$m4 << EOD
0.814647925 58.328 0.803434295
EOD
$s5 << EOD
0.182470593 55.33 1
0.182470593 55.7 2
0.182470593 56.34 3
0.182470593 56.23 4
0.182470593 55.66 5
0.182470593 56.12 6
0.182470593 56.36 7
0.182470593 56.62 8
0.182470593 55.92 9
0.182470593 55.73 10
EOD
$m5 << EOD
0.182470593 56.001 0.398704848
EOD
$s6 << EOD
0.306117659 56.67 1
0.306117659 57.15 2
0.306117659 57.88 3
0.306117659 56.91 4
0.306117659 57.11 5
0.306117659 58.1 6
0.306117659 58.32 7
0.306117659 57.89 8
0.306117659 56.82 9
0.306117659 56.22 10
EOD
$m6 << EOD
0.306117659 57.307 0.696723283
EOD
$s7 << EOD
0.547411793 58.88 1
0.547411793 58.3 2
0.547411793 57.53 3
0.547411793 58.5 4
0.547411793 57.99 5
0.547411793 58.33 6
0.547411793 59.63 7
0.547411793 58.9 8
0.547411793 57.59 9
0.547411793 57.48 10
EOD
$m7 << EOD
0.547411793 58.313 0.696818963
EOD
if (!exists('svg_out')) svg_out = 'experiments/normalizers/full/plots/acc_vs_density_cifar10.svg'
if (!exists('png_out')) png_out = 'experiments/normalizers/full/plots/acc_vs_density_cifar10.png'
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
