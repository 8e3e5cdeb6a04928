$s1 << EOD
0.982 78.75 1
0.982 77.16 2
0.982 77.24 3
0.982 79.18 4
0.982 77.96 5
0.982 77.88 6
0.982 78.56 7
0.982 79.06 8
0.982 77.99 9
0.982 79.36 10
EOD
$m1 << EOD
0.982 78.314 0.785637745
EOD
$s2 << EOD
0.761144022 80.66 1
0.760601731 80.04 2
0.767820159 80.26 3
0.770443337 80.62 4
0.829892779 80.11 5
0.839546928 80.32 6
0.725946577 80.53 7
0.790560158 80.49 8
0.796123492 79.99 9
0.777733566 80.03 10
EOD
$m2 << EOD
0.781981275 80.305 0.257218023
EOD
$s3 << EOD
0.957109821 80.12 1
0.956075643 77.87 2
0.969529447 79.49 3
0.958258514 79.92 4
0.977638108 79.03 5
0.967721325 79.34 6
0.961598349 79.63 7
0.957032134 80 8
0.960511682 79.62 9
0.969254759 79.88 10
EOD
$m3 << EOD
0.963472978 79.49 0.657351589
EOD
$s4 << EOD
0.964346156 80.03 1
0.957643129 77.94 2
0.976267613 79.53 3
0.966553017 80.18 4
0.983062461 79 5
0.974018462 79.21 6
0.967324831 79.58 7
0.961643897 79.93 8
0.965290092 79.58 9
0.971982732 79.76 10
EOD
$m4 << EOD
0.968813239 79.474 0.647254029
EOD
$s5 << EOD
0.182470593 79.84 1
0.182470593 79.36 2
0.182470593 80 3
0.182470593 80.64 4
0.182470593 78.48 5
0.182470593 79.95 6
0.182470593 80.09 7
0.182470593 79.9 8
0.182470593 79.98 9
0.182470593 80.32 10
EOD
$m5 << EOD
0.182470593 79.856 0.584165121
EOD
$s6 << EOD
0.306117659 80.38 1
0.306117659 78.99 2
0.306117659 79.95 3
0.306117659 79.56 4
0.306117659 79.46 5
0.306117659 80.08 6
0.306117659 81.04 7
0.306117659 80.54 8
0.306117659 80.06 9
0.306117659 80.63 10
EOD
$m6 << EOD
0.306117659 80.069 0.6132509
EOD
$s7 << EOD
0.547411793 80.61 1
0.547411793 79.74 2
0.547411793 79.11 3
0.547411793 80.04 4
0.547411793 79.38 5
0.547411793 78.5 6
0.547411793 79.96 7
0.547411793 79.17 8
0.547411793 78.95 9
0.547411793 79.36 10
EOD
$m7 << EOD
0.547411793 79.482 0.613474621
EOD
if (!exists('svg_out')) svg_out = 'experiments/normalizers/main_2core/plots/acc_vs_density_fashion_mnist.svg'
if (!exists('png_out')) png_out = 'experiments/normalizers/main_2core/plots/acc_vs_density_fashion_mnist.png'
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
