$s1 << EOD
0.937628872 22.5 1
0.937628872 24.45 2
0.937628872 25.25 3
0.937628872 21.05 4
0.937628872 25.1 5
0.937628872 12 6
0.937628872 26.25 7
0.937628872 21.65 8
0.937628872 13.05 9
0.937628872 23.4 10
EOD
$m1 << EOD
0.937628872 21.47 4.99739932
EOD
$s2 << EOD
0.454136161 27.65 1
0.458277652 20.85 2
0.431609022 29.7 3
0.436964525 25.05 4
0.457947636 17.8 5
0.445182862 18 6
0.450317638 27.65 7
0.454728281 18.85 8
0.479554428 18.35 9
0.464032507 28.25 10
EOD
$m2 << EOD
0.453275071 23.215 4.88700374
EOD
$s3 << EOD
0.949302656 22 1
0.949587544 21.1 2
0.949562644 27.4 3
0.94958697 21.45 4
0.94962309 21.85 5
0.949598615 13.9 6
0.949233917 27.2 7
0.947467838 23 8
0.949529764 13.8 9
0.949377392 25.95 10
EOD
$m3 << EOD
0.949287043 21.765 4.78696436
EOD
$s4 << EOD
0.95529332 22 1
0.955598153 20.95 2
0.955560803 27.35 3
0.955584966 21.45 4
0.955623254 21.8 5
0.955562353 12.95 6
0.955212884 27.25 7
0.95343744 23.05 8
0.955525644 13.75 9
0.955367222 26 10
EOD
$m4 << EOD
0.955276604 21.655 4.98338629
EOD
$s5 << EOD
0.133716497 18.75 1
0.133716497 22 2
0.133716497 22.1 3
0.133716497 13.85 4
0.133716497 21.05 5
0.133716497 17.05 6
0.133716497 17.5 7
0.133716497 14.75 8
0.133716497 14.8 9
0.133716497 17.7 10
EOD
$m5 << EOD
0.133716497 17.955 3.01703036
EOD
$s6 << EOD
0.258010303 22.55 1
0.258010303 22.8 2
0.258010303 22.7 3
0.258010303 18.85 4
0.258010303 19.8 5
0.258010303 14.65 6
0.258010303 16.2 7
0.258010303 18.85 8
0.258010303 14.15 9
0.258010303 21.7 10
EOD
$m6 << EOD
0.258010303 19.225 3.30800796
EOD
$s7 << EOD
0.500530922 22 1
0.500530922 21.75 2
0.500530922 24.05 3
0.500530922 22.25 4
0.500530922 19.35 5
0.500530922 14.15 6
0.500530922 21.35 7
0.500530922 19.65 8
0.500530922 12.3 9
0.500530922 21 10
EOD
$m7 << EOD
0.500530922 19.785 3.72596371
EOD
if (!exists('svg_out')) svg_out = 'experiments/normalizers/main_2core/plots/acc_vs_density_newsgroups20_masked.svg'
if (!exists('png_out')) png_out = 'experiments/normalizers/main_2core/plots/acc_vs_density_newsgroups20_masked.png'
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
