$s1 << EOD
0.982 79.1 1
0.982 81.95 2
0.982 81.05 3
0.982 81.25 4
0.982 80.4 5
0.982 80.35 6
0.982 81.45 7
0.982 80.25 8
0.982 80.35 9
0.982 80.2 10
EOD
$m1 << EOD
0.982 80.635 0.806587462
EOD
$s2 << EOD
0.311416088 76.8 1
0.307503244 79.45 2
0.311720586 76.9 3
0.317458907 76.2 4
0.30086462 76.4 5
0.290190527 78.2 6
0.30378612 77.35 7
0.319054498 78.2 8
0.310857484 76.4 9
0.315639055 77.55 10
EOD
$m2 << EOD
0.308849113 77.345 1.02887479
EOD
$s3 << EOD
0.766873923 79.1 1
0.759198745 82.6 2
0.750887116 80.55 3
0.776692693 78.6 4
0.719341909 81.5 5
0.741587144 80.15 6
0.78234343 79 7
0.761900944 79.5 8
0.77291393 79.4 9
0.755649221 79.2 10
EOD
$m3 << EOD
0.758738905 79.96 1.26222907
EOD
$s4 << EOD
0.774097107 78.9 1
0.767349266 82.65 2
0.7625558 80.65 3
0.775313579 79.35 4
0.725688793 81.65 5
0.75145112 80.7 6
0.788216263 79.5 7
0.767536327 79.45 8
0.778102718 79.25 9
0.763626516 79.05 10
EOD
$m4 << EOD
0.765393749 80.115 1.25500111
EOD
$s5 << EOD
0.182470593 75.6 1
0.182470593 77.55 2
0.182470593 76.1 3
0.182470593 76.7 4
0.182470593 78.7 5
0.182470593 78.85 6
0.182470593 77.6 7
0.182470593 78.1 8
0.182470593 76.1 9
0.182470593 75.95 10
EOD
$m5 << EOD
0.182470593 77.125 1.19262782
EOD
$s6 << EOD
0.306117659 77.3 1
0.306117659 79.95 2
0.306117659 77.3 3
0.306117659 79 4
0.306117659 79.3 5
0.306117659 80.2 6
0.306117659 78.75 7
0.306117659 80.5 8
0.306117659 79.65 9
0.306117659 79.55 10
EOD
$m6 << EOD
0.306117659 79.15 1.10679718
EOD
$s7 << EOD
0.547411793 78.65 1
0.547411793 82.7 2
0.547411793 80.2 3
0.547411793 78.95 4
0.547411793 79.6 5
0.547411793 79.45 6
0.547411793 80.4 7
0.547411793 80.8 8
0.547411793 78.75 9
0.547411793 81.35 10
EOD
$m7 << EOD
0.547411793 80.085 1.28366879
EOD
if (!exists('svg_out')) svg_out = 'experiments/normalizers/full/kmnist/plots/acc_vs_density_kmnist.svg'
if (!exists('png_out')) png_out = 'experiments/normalizers/full/kmnist/plots/acc_vs_density_kmnist.png'
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
