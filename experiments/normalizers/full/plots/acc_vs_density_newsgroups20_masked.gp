$s1 << EOD
0.937263019 80.669145 1
0.937263019 80.4832714 2
0.937263019 80.3903346 3
EOD
$m1 << EOD
0.937263019 80.5142503 0.141963311
EOD
$s2 << EOD
0.0695694546 76.4073287 1
0.0687001702 74.8008497 2
0.0668349197 74.9601699 3
EOD
$m2 << EOD
0.0683681815 75.3894495 0.885101345
EOD
$s3 << EOD
0.449232926 79.8194371 1
0.483735879 79.4742432 2
EOD
$m3 << EOD
0.466484402 79.6468401 0.244088905
EOD
$s4 << EOD
0.481625095 80.3106745 1
0.520196084 79.7663303 2
EOD
$m4 << EOD
0.500910589 80.0385024 0.384909427
EOD
$s5 << EOD
0.133672434 80.2973978 1
0.133672434 79.8459904 2
EOD
$m5 << EOD
0.133672434 80.0716941 0.319193183
EOD
$s6 << EOD
0.257908856 81.5321296 1
0.257908856 80.5894849 2
EOD
$m6 << EOD
0.257908856 81.0608072 0.666550471
EOD
$s7 << EOD
0.500367933 81.0010621 1
0.500367933 80.4301646 2
EOD
$m7 << EOD
0.500367933 80.7156134 0.403685496
EOD
set terminal svg size 880,560 dynamic noenhanced font 'Sans,12' background rgb 'white'
set output 'experiments/normalizers/full/plots/acc_vs_density_newsgroups20_masked.svg'
set title 'newsgroups20_masked: test accuracy vs attention support density (3 seeds; squares: mean ± sd)'
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
set output 'experiments/normalizers/full/plots/acc_vs_density_newsgroups20_masked.png'
set title 'newsgroups20_masked: test accuracy vs attention support density (3 seeds; squares: mean ± sd)'
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
