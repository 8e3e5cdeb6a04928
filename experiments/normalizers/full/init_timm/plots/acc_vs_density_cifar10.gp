$s1 << EOD
0.991 55.54 1
0.991 54.66 2
0.991 55.29 3
0.991 54.65 4
0.991 54.74 5
0.991 54.68 6
0.991 55.95 7
0.991 55.87 8
0.991 55.93 9
0.991 55.32 10
EOD
$m1 << EOD
0.991 55.263 0.549627146
EOD
$s2 << EOD
0.835342197 56.24 1
0.858640826 55.36 2
0.868729292 55.82 3
0.860648325 56.23 4
0.892335644 55.53 5
0.867880447 56.12 6
0.884751587 56.01 7
0.847325651 56.21 8
0.839420198 56.27 9
0.859178512 55.64 10
EOD
$m2 << EOD
0.861425268 55.943 0.333668165
EOD
$s3 << EOD
0.179470593 53.41 1
0.179470593 54.05 2
0.179470593 53.84 3
0.179470593 53.47 4
0.179470593 53.99 5
0.179470593 53.88 6
0.179470593 53.37 7
0.179470593 54.54 8
0.179470593 53.88 9
0.179470593 53.45 10
EOD
$m3 << EOD
0.179470593 53.788 0.369317689
EOD
$s4 << EOD
0.303117659 54.22 1
0.303117659 54.33 2
0.303117659 54.59 3
0.303117659 54.92 4
0.303117659 55.45 5
0.303117659 54.51 6
0.303117659 55.02 7
0.303117659 55.52 8
0.303117659 55.65 9
0.303117659 55.03 10
EOD
$m4 << EOD
0.303117659 54.924 0.50671491
EOD
if (!exists('svg_out')) svg_out = 'experiments/normalizers/full/init_timm/plots/acc_vs_density_cifar10.svg'
if (!exists('png_out')) png_out = 'experiments/normalizers/full/init_timm/plots/acc_vs_density_cifar10.png'
set terminal svg size 880,560 dynamic noenhanced font 'Sans,12' background rgb 'white'
set output svg_out
set title 'cifar10: test accuracy vs attention support density (10 seeds; squares: mean ± sd)'
set xlabel 'support density (share of keys with nonzero weight; 1 = dense); normalizers offset by up to ±0.009'
set ylabel 'test accuracy (%)'
set key outside right top
set grid
set xrange [0:1.05]
set offsets 0, 0, graph 0.08, graph 0.08
plot $s1 using 1:2 with points pt 7 ps 0.8 lc rgb '#1f77b4' title 'softmax', \
     $m1 using 1:2:3 with yerrorbars pt 4 ps 2 lw 2 lc rgb '#1f77b4' notitle, \
     $s2 using 1:2 with points pt 5 ps 0.8 lc rgb '#2ca02c' title 'entmax15', \
     $m2 using 1:2:3 with yerrorbars pt 4 ps 2 lw 2 lc rgb '#2ca02c' notitle, \
     $s3 using 1:2 with points pt 13 ps 0.8 lc rgb '#ff7f0e' title 'topk:0.125', \
     $m3 using 1:2:3 with yerrorbars pt 4 ps 2 lw 2 lc rgb '#ff7f0e' notitle, \
     $s4 using 1:2 with points pt 15 ps 0.8 lc rgb '#8c564b' title 'topk:0.25', \
     $m4 using 1:2:3 with yerrorbars pt 4 ps 2 lw 2 lc rgb '#8c564b' notitle
unset output
set terminal pngcairo size 880,560 noenhanced font 'Sans,10' background rgb 'white'
set output png_out
set title 'cifar10: test accuracy vs attention support density (10 seeds; squares: mean ± sd)'
set xlabel 'support density (share of keys with nonzero weight; 1 = dense); normalizers offset by up to ±0.009'
set ylabel 'test accuracy (%)'
set key outside right top
set grid
set xrange [0:1.05]
set offsets 0, 0, graph 0.08, graph 0.08
plot $s1 using 1:2 with points pt 7 ps 0.8 lc rgb '#1f77b4' title 'softmax', \
     $m1 using 1:2:3 with yerrorbars pt 4 ps 2 lw 2 lc rgb '#1f77b4' notitle, \
     $s2 using 1:2 with points pt 5 ps 0.8 lc rgb '#2ca02c' title 'entmax15', \
     $m2 using 1:2:3 with yerrorbars pt 4 ps 2 lw 2 lc rgb '#2ca02c' notitle, \
     $s3 using 1:2 with points pt 13 ps 0.8 lc rgb '#ff7f0e' title 'topk:0.125', \
     $m3 using 1:2:3 with yerrorbars pt 4 ps 2 lw 2 lc rgb '#ff7f0e' notitle, \
     $s4 using 1:2 with points pt 15 ps 0.8 lc rgb '#8c564b' title 'topk:0.25', \
     $m4 using 1:2:3 with yerrorbars pt 4 ps 2 lw 2 lc rgb '#8c564b' notitle
unset output
