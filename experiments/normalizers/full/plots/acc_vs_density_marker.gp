$s1 << EOD
0.982 20.8 1
0.982 20.25 2
0.982 20.35 3
0.982 20.35 4
0.982 20.4 5
0.982 21.35 6
0.982 20.65 7
0.982 20.65 8
0.982 20.15 9
0.982 20.8 10
EOD
$m1 << EOD
0.982 20.575 0.354534123
EOD
$s2 << EOD
0.0542541911 18.65 1
0.053987472 19 2
0.0524831536 17.95 3
0.0537833791 21 4
0.0509262007 18.85 5
0.0522491826 20.4 6
0.0593143861 21 7
0.0576845301 20.4 8
0.0554619186 18.45 9
0.0497552609 19.6 10
EOD
$m2 << EOD
0.0539899675 19.53 1.10659638
EOD
$s3 << EOD
0.292909931 18.3 1
0.29405932 18.75 2
0.312585876 18.2 3
0.298031361 17.4 4
0.324394462 17.5 5
0.311249946 18.4 6
0.326554571 17.45 7
0.325178278 17.5 8
0.323614263 18.5 9
0.280583219 19.65 10
EOD
$m3 << EOD
0.308916123 18.165 0.72382088
EOD
$s4 << EOD
0.288625309 17.15 1
0.292206684 18.9 2
0.311049946 19.25 3
0.30130071 18.6 4
0.319026567 17.4 5
0.307977006 17.35 6
0.322087547 19.05 7
0.322796803 17.25 8
0.32409307 19.4 9
0.276215771 18.95 10
EOD
$m4 << EOD
0.306537941 18.33 0.923519837
EOD
$s5 << EOD
0.140020612 19.8 1
0.140020612 20.7 2
0.140020612 20.2 3
0.140020612 19.55 4
0.140020612 19.4 5
0.140020612 20.35 6
0.140020612 19.4 7
0.140020612 19.8 8
0.140020612 20.5 9
0.140020612 19.95 10
EOD
$m5 << EOD
0.140020612 19.965 0.458893597
EOD
$s6 << EOD
0.269731944 19 1
0.269731944 20.85 2
0.269731944 20.3 3
0.269731944 20.5 4
0.269731944 19.65 5
0.269731944 19.7 6
0.269731944 18.4 7
0.269731944 19.45 8
0.269731944 19.2 9
0.269731944 18.75 10
EOD
$m6 << EOD
0.269731944 19.58 0.787118514
EOD
$s7 << EOD
0.52315461 20.05 1
0.52315461 20.9 2
0.52315461 19.45 3
0.52315461 20.85 4
0.52315461 20.9 5
0.52315461 21.1 6
0.52315461 19.9 7
0.52315461 20.25 8
0.52315461 19.8 9
0.52315461 19.85 10
EOD
$m7 << EOD
0.52315461 20.305 0.583309523
EOD
if (!exists('svg_out')) svg_out = 'experiments/normalizers/full/plots/acc_vs_density_marker.svg'
if (!exists('png_out')) png_out = 'experiments/normalizers/full/plots/acc_vs_density_marker.png'
set terminal svg size 880,560 dynamic noenhanced font 'Sans,12' background rgb 'white'
set output svg_out
set title 'marker: test accuracy vs attention support density (10 seeds; squares: mean ± sd)'
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
set title 'marker: test accuracy vs attention support density (10 seeds; squares: mean ± sd)'
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
