$s1 << EOD
0.982 80.3106745 1
0.982 80.8151885 2
0.982 80.6824217 3
0.982 80.6558683 4
0.982 81.2665959 5
0.982 81.2665959 6
0.982 80.8550186 7
0.982 79.7928837 8
0.982 80.8550186 9
0.982 80.7222517 10
EOD
$m1 << EOD
0.982 80.7222517 0.431486626
EOD
$s2 << EOD
0.0721973517 75.9691981 1
0.0676057517 74.6548062 2
0.067137573 75.1327669 3
0.0642207494 76.2081784 4
0.0731192651 74.6149761 5
0.0748067695 75.1327669 6
0.0630280721 75.7833245 7
0.0652279296 75.252257 8
0.0658574143 76.1949018 9
0.0675456432 75.4779607 10
EOD
$m2 << EOD
0.068074652 75.4421136 0.585046916
EOD
$s3 << EOD
0.450767943 80.031864 1
0.472668734 79.1556028 2
0.485385709 79.739777 3
0.445585021 80.0584174 4
0.483271872 79.5406267 5
0.459628974 78.9697292 6
0.448584852 80.0982475 7
0.438275115 78.7307488 8
0.4852109 80.6425916 9
0.45825068 79.102496 10
EOD
$m3 << EOD
0.46276298 79.6070101 0.610310519
EOD
$s4 << EOD
0.489777349 79.8858205 1
0.51069938 79.1423261 2
0.521675136 79.314923 3
0.475643754 80.6293149 4
0.516998097 80.0185874 5
0.486888848 78.7838555 6
0.475178182 79.7530536 7
0.467320338 78.4519384 8
0.52068942 80.6824217 9
0.492611635 79.2485396 10
EOD
$m4 << EOD
0.495748214 79.5910781 0.73854662
EOD
$s5 << EOD
0.140020612 79.5406267 1
0.140020612 79.8327138 2
0.140020612 80.031864 3
0.140020612 80.1513542 4
0.140020612 79.8990972 5
0.140020612 79.6202868 6
0.140020612 80.6027616 7
0.140020612 78.6776421 8
0.140020612 80.5629315 9
0.140020612 80.1380775 10
EOD
$m5 << EOD
0.140020612 79.9057355 0.555412445
EOD
$s6 << EOD
0.269731944 80.6293149 1
0.269731944 80.7753585 2
0.269731944 80.4168879 3
0.269731944 80.4434413 4
0.269731944 80.4832714 5
0.269731944 80.0982475 6
0.269731944 81.0807223 7
0.269731944 79.4742432 8
0.269731944 81.1869357 9
0.269731944 79.8061604 10
EOD
$m6 << EOD
0.269731944 80.4394583 0.534414792
EOD
$s7 << EOD
0.52315461 81.7445566 1
0.52315461 80.9479554 2
0.52315461 80.7753585 3
0.52315461 79.8725438 4
0.52315461 80.8151885 5
0.52315461 80.8417419 6
0.52315461 81.0939989 7
0.52315461 79.3281997 8
0.52315461 81.1736591 9
0.52315461 80.8019118 10
EOD
$m7 << EOD
0.52315461 80.7395114 0.677618441
EOD
if (!exists('svg_out')) svg_out = 'experiments/normalizers/full/plots/acc_vs_density_newsgroups20.svg'
if (!exists('png_out')) png_out = 'experiments/normalizers/full/plots/acc_vs_density_newsgroups20.png'
set terminal svg size 880,560 dynamic noenhanced font 'Sans,12' background rgb 'white'
set output svg_out
set title 'newsgroups20: test accuracy vs attention support density (10 seeds; squares: mean ± sd)'
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
set title 'newsgroups20: test accuracy vs attention support density (10 seeds; squares: mean ± sd)'
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
