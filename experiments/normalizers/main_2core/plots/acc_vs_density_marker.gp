$s1 << EOD
0.982 13.75 1
0.982 14.7 2
0.982 14.7 3
0.982 13.8 4
0.982 13.55 5
0.982 13.2 6
0.982 12.65 7
0.982 14.65 8
0.982 14.35 9
0.982 14.2 10
EOD
$m1 << EOD
0.982 13.955 0.692198591
EOD
$s2 << EOD
0.422927899 21.9 1
0.445324192 19.75 2
0.370642262 18.05 3
0.434955446 18.55 4
0.422193846 23.2 5
0.443958657 19.5 6
0.421889352 20.6 7
0.400202239 20.3 8
0.447161736 20.35 9
0.430235701 20.9 10
EOD
$m2 << EOD
0.423949133 20.31 1.50882589
EOD
$s3 << EOD
0.992029247 17.65 1
0.991088455 16.35 2
0.987690781 16 3
0.991430816 16.45 4
0.988748548 19.4 5
0.992385355 15.95 6
0.992265401 17.15 7
0.991751825 16.85 8
0.990581636 18.75 9
0.991801587 18.3 10
EOD
$m3 << EOD
0.990977365 17.285 1.20163084
EOD
$s4 << EOD
0.997959092 17.75 1
0.996987715 16.3 2
0.993353531 15.9 3
0.997369781 16.45 4
0.994444862 19.35 5
0.998321868 15.95 6
0.998212844 17.15 7
0.997668035 16.85 8
0.996483594 18.7 9
0.997716725 18.3 10
EOD
$m4 << EOD
0.996851805 17.27 1.20581922
EOD
$s5 << EOD
0.140020612 20.55 1
0.140020612 15.6 2
0.140020612 14.65 3
0.140020612 14.05 4
0.140020612 20.5 5
0.140020612 18.35 6
0.140020612 16.75 7
0.140020612 16.3 8
0.140020612 17.3 9
0.140020612 17.8 10
EOD
$m5 << EOD
0.140020612 17.185 2.20605858
EOD
$s6 << EOD
0.269731944 19.25 1
0.269731944 15.75 2
0.269731944 13.4 3
0.269731944 14.3 4
0.269731944 17.95 5
0.269731944 14.25 6
0.269731944 14.1 7
0.269731944 13.45 8
0.269731944 15.4 9
0.269731944 17 10
EOD
$m6 << EOD
0.269731944 15.485 1.99889553
EOD
$s7 << EOD
0.52315461 13.6 1
0.52315461 15.25 2
0.52315461 14.6 3
0.52315461 12.05 4
0.52315461 15.5 5
0.52315461 13.2 6
0.52315461 12.85 7
0.52315461 13.75 8
0.52315461 15.95 9
0.52315461 16.1 10
EOD
$m7 << EOD
0.52315461 14.285 1.39683173
EOD
if (!exists('svg_out')) svg_out = 'experiments/normalizers/main_2core/plots/acc_vs_density_marker.svg'
if (!exists('png_out')) png_out = 'experiments/normalizers/main_2core/plots/acc_vs_density_marker.png'
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
