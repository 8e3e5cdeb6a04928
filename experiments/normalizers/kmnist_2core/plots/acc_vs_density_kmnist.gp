$s1 << EOD
0.982 67.85 1
0.982 66.2 2
0.982 66.9 3
0.982 66 4
0.982 66.1 5
0.982 67.1 6
0.982 67.75 7
0.982 65.25 8
0.982 67.7 9
0.982 68.6 10
EOD
$m1 << EOD
0.982 66.945 1.04547969
EOD
$s2 << EOD
0.710089529 71.25 1
0.718264276 72.3 2
0.730239401 72.65 3
0.686465839 71.8 4
0.76969442 71.8 5
0.707268389 70.8 6
0.730441826 73.4 7
0.633187281 73.45 8
0.743337372 72.4 9
0.75407202 71.9 10
EOD
$m2 << EOD
0.718306035 72.175 0.851224608
EOD
$s3 << EOD
0.952581306 69.85 1
0.975140785 71.1 2
0.957684469 69.75 3
0.972365049 68.75 4
0.966668462 70.2 5
0.944123042 69.6 6
0.952586939 71.4 7
0.941482489 71.55 8
0.95659667 70.55 9
0.952944641 69.4 10
EOD
$m3 << EOD
0.957217385 70.215 0.92016001
EOD
$s4 << EOD
0.956618957 70.1 1
0.975820281 71.4 2
0.96025303 69.7 3
0.977632567 66.8 4
0.971838892 70.05 5
0.949798219 69.25 6
0.962043472 71.05 7
0.944513619 72.2 8
0.960669547 70.3 9
0.958347104 69.9 10
EOD
$m4 << EOD
0.961753569 70.075 1.44726754
EOD
$s5 << EOD
0.182470593 67.7 1
0.182470593 66.45 2
0.182470593 65.2 3
0.182470593 65.4 4
0.182470593 66.95 5
0.182470593 62.65 6
0.182470593 66.95 7
0.182470593 65.9 8
0.182470593 64 9
0.182470593 64.65 10
EOD
$m5 << EOD
0.182470593 65.585 1.53587651
EOD
$s6 << EOD
0.306117659 67.75 1
0.306117659 69.3 2
0.306117659 68.75 3
0.306117659 70.15 4
0.306117659 68.3 5
0.306117659 65.75 6
0.306117659 67.4 7
0.306117659 70.45 8
0.306117659 67.55 9
0.306117659 68.7 10
EOD
$m6 << EOD
0.306117659 68.41 1.39299836
EOD
$s7 << EOD
0.547411793 68.95 1
0.547411793 69.55 2
0.547411793 68.4 3
0.547411793 69.9 4
0.547411793 68.2 5
0.547411793 68.4 6
0.547411793 69.4 7
0.547411793 68.75 8
0.547411793 68.85 9
0.547411793 68.5 10
EOD
$m7 << EOD
0.547411793 68.89 0.5626327
EOD
if (!exists('svg_out')) svg_out = 'experiments/normalizers/kmnist_2core/plots/acc_vs_density_kmnist.svg'
if (!exists('png_out')) png_out = 'experiments/normalizers/kmnist_2core/plots/acc_vs_density_kmnist.png'
set terminal svg size 880,560 dynamic noenhanced font 'Sans,12' background rgb 'white'
set output svg_out
set title 'kmnist: test accuracy vs attention support density (10 seeds; squares: mean ± sd)'
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
set title 'kmnist: test accuracy vs attention support density (10 seeds; squares: mean ± sd)'
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
