$s1 << EOD
0.991 87.66 1
0.991 87.71 2
0.991 87.27 3
0.991 87.91 4
0.991 87.91 5
0.991 87.89 6
0.991 87.83 7
0.991 87.85 8
0.991 87.6 9
0.991 87.89 10
EOD
$m1 << EOD
0.991 87.752 0.202583316
EOD
$s2 << EOD
0.702329657 87.71 1
0.729688792 88.03 2
0.720145932 87.57 3
0.749909161 87.78 4
0.746140777 87.81 5
0.692836768 88.05 6
0.753142251 87.51 7
0.70326194 88.17 8
0.697225681 88.45 9
0.701670854 88.37 10
EOD
$m2 << EOD
0.719635181 87.945 0.322326611
EOD
$s3 << EOD
0.179470593 87.44 1
0.179470593 87.43 2
0.179470593 87.5 3
0.179470593 87.72 4
0.179470593 87.5 5
0.179470593 88.05 6
0.179470593 87.88 7
0.179470593 87.76 8
0.179470593 87.78 9
0.179470593 87.37 10
EOD
$m3 << EOD
0.179470593 87.643 0.226620093
EOD
$s4 << EOD
0.303117659 88.19 1
0.303117659 87.67 2
0.303117659 87.27 3
0.303117659 87.64 4
0.303117659 87.36 5
0.303117659 88.02 6
0.303117659 87.38 7
0.303117659 87.36 8
0.303117659 87.98 9
0.303117659 87.53 10
EOD
$m4 << EOD
0.303117659 87.64 0.322628097
EOD
if (!exists('svg_out')) svg_out = 'experiments/normalizers/full/init_timm/plots/acc_vs_density_fashion_mnist.svg'
if (!exists('png_out')) png_out = 'experiments/normalizers/full/init_timm/plots/acc_vs_density_fashion_mnist.png'
set terminal svg size 880,560 dynamic noenhanced font 'Sans,12' background rgb 'white'
set output svg_out
set title 'fashion_mnist: test accuracy vs attention support density (10 seeds; squares: mean ± sd)'
set xlabel 'support density (share of keys with nonzero weight; 1 = dense); normalizers offset by up to ±0.009'
set ylabel 'test accuracy (%)'
set key outside right top
set grid
set xrange [0:1.05]
set offsets 0, 0, graph 0.08, graph 0.08
plot $s1 using 1:2 with points pt 7 ps 0.8 lc rgb '#1f77b4' title 'softmax', \
     $m1 using 1:2:3 with yerrorbars pt 4 ps 2 lw 2 lc rgb '#1f77b4' notitle, \
     $s2 using 1:2 with points pt 5 ps 0.8 lc rgb '#2ca02c' title 'entmax15', \
     $m2 using 1:2:3 with yerrorbars pt 4 ps 2 lw 2 lc rgb '#2ca02c' notitle, \
     $s3 using 1:2 with points pt 13 ps 0.8 lc rgb '#ff7f0e' title 'topk:0.125', \
     $m3 using 1:2:3 with yerrorbars pt 4 ps 2 lw 2 lc rgb '#ff7f0e' notitle, \
     $s4 using 1:2 with points pt 15 ps 0.8 lc rgb '#8c564b' title 'topk:0.25', \
     $m4 using 1:2:3 with yerrorbars pt 4 ps 2 lw 2 lc rgb '#8c564b' notitle
unset output
set terminal pngcairo size 880,560 noenhanced font 'Sans,10' background rgb 'white'
set output png_out
set title 'fashion_mnist: test accuracy vs attention support density (10 seeds; squares: mean ± sd)'
set xlabel 'support density (share of keys with nonzero weight; 1 = dense); normalizers offset by up to ±0.009'
set ylabel 'test accuracy (%)'
set key outside right top
set grid
set xrange [0:1.05]
set offsets 0, 0, graph 0.08, graph 0.08
plot $s1 using 1:2 with points pt 7 ps 0.8 lc rgb '#1f77b4' title 'softmax', \
     $m1 using 1:2:3 with yerrorbars pt 4 ps 2 lw 2 lc rgb '#1f77b4' notitle, \
     $s2 using 1:2 with points pt 5 ps 0.8 lc rgb '#2ca02c' title 'entmax15', \
     $m2 using 1:2:3 with yerrorbars pt 4 ps 2 lw 2 lc rgb '#2ca02c' notitle, \
     $s3 using 1:2 with points pt 13 ps 0.8 lc rgb '#ff7f0e' title 'topk:0.125', \
     $m3 using 1:2:3 with yerrorbars pt 4 ps 2 lw 2 lc rgb '#ff7f0e' notitle, \
     $s4 using 1:2 with points pt 15 ps 0.8 lc rgb '#8c564b' title 'topk:0.25', \
     $m4 using 1:2:3 with yerrorbars pt 4 ps 2 lw 2 lc rgb '#8c564b' notitle
unset output
