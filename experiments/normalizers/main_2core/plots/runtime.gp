set datafile missing '?'
$rt1 << EOD
dataset "softmax" "sparsemax" "entmax15" "hae" "topk:0.125" "topk:0.25" "topk:0.5"
"cifar10" 1 0.951542 1.03558 1.16975 1.05191 1.23943 1.39183
"fashion_mnist" 1 1.05979 0.928062 1.03514 1.06992 0.770049 0.729223
"newsgroups20" 1 0.993016 1.10786 1.31096 0.998739 0.973834 0.824483
"marker" 1 1.02382 0.925481 1.01475 0.918353 1.01408 1.08312
"newsgroups20_masked" 1 1.10476 0.900483 1.03106 0.836436 0.881044 0.843686
EOD
$rt2 << EOD
dataset "softmax" "sparsemax" "entmax15" "hae" "topk:0.125" "topk:0.25" "topk:0.5"
"cifar10" 1 1.02785 1.01428 1.28059 1.40369 1.44715 1.12701
"fashion_mnist" 1 0.945861 1.05454 1.17591 0.857383 0.894561 0.861244
"newsgroups20" 1 1.27965 1.17972 1.2512 1.03956 0.909279 0.888482
"marker" 1 0.961606 0.842969 1.10105 0.977744 1.01496 1.14435
"newsgroups20_masked" 1 0.758699 0.831433 0.897745 0.799846 0.747149 0.786858
EOD
if (!exists('svg_out')) svg_out = 'experiments/normalizers/main_2core/plots/runtime.svg'
if (!exists('png_out')) png_out = 'experiments/normalizers/main_2core/plots/runtime.png'
set terminal svg size 880,560 dynamic noenhanced font 'Sans,12' background rgb 'white'
set output svg_out
set multiplot layout 2,1
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set key outside right top
set grid ytics
set yrange [0:1.601]
set title 'training step time relative to softmax (median over seeds)'
set ylabel '× softmax'
plot $rt1 using 2:xtic(1) lc rgb '#1f77b4' title columnheader(2), \
     $rt1 using 3 lc rgb '#d62728' title columnheader(3), \
     $rt1 using 4 lc rgb '#2ca02c' title columnheader(4), \
     $rt1 using 5 lc rgb '#9467bd' title columnheader(5), \
     $rt1 using 6 lc rgb '#ff7f0e' title columnheader(6), \
     $rt1 using 7 lc rgb '#8c564b' title columnheader(7), \
     $rt1 using 8 lc rgb '#e377c2' title columnheader(8), \
     1 with lines dt 2 lc rgb 'black' notitle
set yrange [0:1.664]
set title 'inference time per example relative to softmax'
set ylabel '× softmax'
plot $rt2 using 2:xtic(1) lc rgb '#1f77b4' title columnheader(2), \
     $rt2 using 3 lc rgb '#d62728' title columnheader(3), \
     $rt2 using 4 lc rgb '#2ca02c' title columnheader(4), \
     $rt2 using 5 lc rgb '#9467bd' title columnheader(5), \
     $rt2 using 6 lc rgb '#ff7f0e' title columnheader(6), \
     $rt2 using 7 lc rgb '#8c564b' title columnheader(7), \
     $rt2 using 8 lc rgb '#e377c2' title columnheader(8), \
     1 with lines dt 2 lc rgb 'black' notitle
unset multiplot
unset output
set terminal pngcairo size 880,560 noenhanced font 'Sans,10' background rgb 'white'
set output png_out
set multiplot layout 2,1
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set key outside right top
set grid ytics
set yrange [0:1.601]
set title 'training step time relative to softmax (median over seeds)'
set ylabel '× softmax'
plot $rt1 using 2:xtic(1) lc rgb '#1f77b4' title columnheader(2), \
     $rt1 using 3 lc rgb '#d62728' title columnheader(3), \
     $rt1 using 4 lc rgb '#2ca02c' title columnheader(4), \
     $rt1 using 5 lc rgb '#9467bd' title columnheader(5), \
     $rt1 using 6 lc rgb '#ff7f0e' title columnheader(6), \
     $rt1 using 7 lc rgb '#8c564b' title columnheader(7), \
     $rt1 using 8 lc rgb '#e377c2' title columnheader(8), \
     1 with lines dt 2 lc rgb 'black' notitle
set yrange [0:1.664]
set title 'inference time per example relative to softmax'
set ylabel '× softmax'
plot $rt2 using 2:xtic(1) lc rgb '#1f77b4' title columnheader(2), \
     $rt2 using 3 lc rgb '#d62728' title columnheader(3), \
     $rt2 using 4 lc rgb '#2ca02c' title columnheader(4), \
     $rt2 using 5 lc rgb '#9467bd' title columnheader(5), \
     $rt2 using 6 lc rgb '#ff7f0e' title columnheader(6), \
     $rt2 using 7 lc rgb '#8c564b' title columnheader(7), \
     $rt2 using 8 lc rgb '#e377c2' title columnheader(8), \
     1 with lines dt 2 lc rgb 'black' notitle
unset multiplot
unset output
