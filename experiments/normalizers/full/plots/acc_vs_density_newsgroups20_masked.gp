$s1 << EOD
0.937263019 80.669145 1
0.937263019 80.4832714 2
0.937263019 80.3903346 3
0.937263019 81.0541689 4
0.937263019 80.708975 5
0.937263019 80.3770579 6
0.937263019 81.1869357 7
0.937263019 79.6335635 8
0.937263019 80.6027616 9
0.937263019 81.0408922 10
EOD
$m1 << EOD
0.937263019 80.6147106 0.44732998
EOD
$s2 << EOD
0.0695694546 76.4073287 1
0.0687001702 74.8008497 2
0.0668349197 74.9601699 3
0.06606993 76.3143919 4
0.0727977251 75.7833245 5
0.0691162228 76.2480085 6
0.0659350149 75.677111 7
0.0656746804 74.575146 8
0.0677072714 76.0090281 9
0.0697810623 75.2257037 10
EOD
$m2 << EOD
0.0682186451 75.6001062 0.668942405
EOD
$s3 << EOD
0.449232926 79.8194371 1
0.483735879 79.4742432 2
0.476589118 79.5406267 3
0.430159927 79.4211365 4
0.471265462 79.3813064 5
0.470076376 78.637812 6
0.443053101 79.1954328 7
0.439550624 78.9431758 8
0.467601926 80.244291 9
0.471906898 79.2352629 10
EOD
$m3 << EOD
0.460317224 79.3892724 0.443758325
EOD
$s4 << EOD
0.481625095 80.3106745 1
0.520196084 79.7663303 2
0.520338017 79.5007966 3
0.459309105 79.9256506 4
0.512713283 79.6601168 5
0.507388629 78.8369623 6
0.48054399 78.8767924 7
0.468108699 78.9564525 8
0.495661616 80.1115242 9
0.510256458 79.1821561 10
EOD
$m4 << EOD
0.495614098 79.5127456 0.530382886
EOD
$s5 << EOD
0.133672434 80.2973978 1
0.133672434 79.8459904 2
0.133672434 79.9389272 3
0.133672434 80.6956984 4
0.133672434 79.7663303 5
0.133672434 79.2352629 6
0.133672434 80.5762082 7
0.133672434 79.0361126 8
0.133672434 80.456718 9
0.133672434 79.7928837 10
EOD
$m5 << EOD
0.133672434 79.9641529 0.551668987
EOD
$s6 << EOD
0.257908856 81.5321296 1
0.257908856 80.5894849 2
0.257908856 80.2310143 3
0.257908856 80.244291 4
0.257908856 79.9256506 5
0.257908856 79.4211365 6
0.257908856 80.708975 7
0.257908856 80.0053107 8
0.257908856 81.0010621 9
0.257908856 80.204461 10
EOD
$m6 << EOD
0.257908856 80.3863516 0.596517501
EOD
$s7 << EOD
0.500367933 81.0010621 1
0.500367933 80.4301646 2
0.500367933 80.1513542 3
0.500367933 80.2177377 4
0.500367933 81.0276155 5
0.500367933 80.4168879 6
0.500367933 81.3329793 7
0.500367933 79.8858205 8
0.500367933 80.0451407 9
0.500367933 81.2267658 10
EOD
$m7 << EOD
0.500367933 80.5735528 0.526467063
EOD
if (!exists('svg_out')) svg_out = 'experiments/normalizers/full/plots/acc_vs_density_newsgroups20_masked.svg'
if (!exists('png_out')) png_out = 'experiments/normalizers/full/plots/acc_vs_density_newsgroups20_masked.png'
set terminal svg size 880,560 dynamic noenhanced font 'Sans,12' background rgb 'white'
set output svg_out
set title 'newsgroups20_masked: test accuracy vs attention support density (10 seeds; squares: mean ± sd)'
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
set title 'newsgroups20_masked: test accuracy vs attention support density (10 seeds; squares: mean ± sd)'
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
