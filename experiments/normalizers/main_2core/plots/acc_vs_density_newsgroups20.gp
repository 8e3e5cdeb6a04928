$s1 << EOD
0.982 17.15 1
0.982 16.9 2
0.982 19.05 3
0.982 22.8 4
0.982 20.3 5
0.982 17.15 6
0.982 11.8 7
0.982 22.6 8
0.982 10.45 9
0.982 17.65 10
EOD
$m1 << EOD
0.982 17.585 4.04269231
EOD
$s2 << EOD
0.482718824 22.7 1
0.481403625 23.1 2
0.448582465 21.95 3
0.468761178 22.7 4
0.466235103 18.95 5
0.472662756 12.9 6
0.455622966 18.2 7
0.472294362 19.05 8
0.502329553 17.6 9
0.48221718 24.95 10
EOD
$m2 << EOD
0.473282801 20.21 3.55072762
EOD
$s3 << EOD
0.993400459 18.6 1
0.993099746 19.95 2
0.993772087 21 3
0.993918953 23.1 4
0.993971226 21.55 5
0.993902844 13.75 6
0.993605976 13.4 7
0.99393623 22.65 8
0.99372 11.45 9
0.993293022 19.75 10
EOD
$m3 << EOD
0.993662054 18.52 4.16174376
EOD
$s4 << EOD
0.999376349 18.25 1
0.999126211 19.95 2
0.999766156 21 3
0.999916218 23.15 4
0.999971531 21.35 5
0.999886371 13.05 6
0.999594234 13.45 7
0.999937117 22.65 8
0.999504343 11.4 9
0.999260306 19.8 10
EOD
$m4 << EOD
0.999633884 18.405 4.25045422
EOD
$s5 << EOD
0.140020612 17.85 1
0.140020612 19.25 2
0.140020612 18.25 3
0.140020612 13.85 4
0.140020612 17.6 5
0.140020612 15.9 6
0.140020612 13.15 7
0.140020612 14.15 8
0.140020612 12.65 9
0.140020612 16.15 10
EOD
$m5 << EOD
0.140020612 15.88 2.33061747
EOD
$s6 << EOD
0.269731944 18.75 1
0.269731944 19.2 2
0.269731944 18.35 3
0.269731944 17.35 4
0.269731944 19.95 5
0.269731944 13.2 6
0.269731944 12.85 7
0.269731944 17.2 8
0.269731944 14.4 9
0.269731944 21.15 10
EOD
$m6 << EOD
0.269731944 17.24 2.86082739
EOD
$s7 << EOD
0.52315461 19.05 1
0.52315461 20.15 2
0.52315461 19.85 3
0.52315461 22.6 4
0.52315461 20.3 5
0.52315461 12.65 6
0.52315461 12.95 7
0.52315461 15.2 8
0.52315461 12.2 9
0.52315461 22.55 10
EOD
$m7 << EOD
0.52315461 17.75 4.0998645
EOD
if (!exists('svg_out')) svg_out = 'experiments/normalizers/main_2core/plots/acc_vs_density_newsgroups20.svg'
if (!exists('png_out')) png_out = 'experiments/normalizers/main_2core/plots/acc_vs_density_newsgroups20.png'
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
