set datafile missing '?'
$rt1 << EOD
dataset "softmax" "sparsemax" "entmax15" "hae" "topk:0.125" "topk:0.25" "topk:0.5"
"kmnist" 1 0.514737 0.530126 0.569946 0.568166 1.02255 0.552975
EOD
$rt2 << EOD
dataset "softmax" "sparsemax" "entmax15" "hae" "topk:0.125" "topk:0.25" "topk:0.5"
"kmnist" 1 0.62624 0.681699 0.655339 0.667135 1.08545 0.620467
EOD
if (!exists('svg_out')) svg_out = 'experiments/normalizers/full/kmnist/plots/runtime.svg'
if (!exists('png_out')) png_out = 'experiments/normalizers/full/kmnist/plots/runtime.png'
set terminal svg size 880,560 dynamic noenhanced font 'Sans,12' background rgb 'white'
set output svg_out
set multiplot layout 2,1
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set key outside right top
set grid ytics
set yrange [0:1.176]
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
set yrange [0:1.248]
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
set yrange [0:1.176]
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
set yrange [0:1.248]
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
