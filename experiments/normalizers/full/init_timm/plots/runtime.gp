set datafile missing '?'
$rt1 << EOD
dataset "softmax" "entmax15" "topk:0.125" "topk:0.25"
"cifar10" 1 1.02517 0.966246 0.934145
"fashion_mnist" 1 1.10655 1.09736 1.17877
EOD
$rt2 << EOD
dataset "softmax" "entmax15" "topk:0.125" "topk:0.25"
"cifar10" 1 1.03099 0.951725 1.01719
"fashion_mnist" 1 1.0988 1.0774 1.10448
EOD
if (!exists('svg_out')) svg_out = 'experiments/normalizers/full/init_timm/plots/runtime.svg'
if (!exists('png_out')) png_out = 'experiments/normalizers/full/init_timm/plots/runtime.png'
set terminal svg size 880,560 dynamic noenhanced font 'Sans,12' background rgb 'white'
set output svg_out
set multiplot layout 2,1
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set key outside right top
set grid ytics
set yrange [0:1.356]
set title 'training step time relative to softmax (median over seeds)'
set ylabel '× softmax'
plot $rt1 using 2:xtic(1) lc rgb '#1f77b4' title columnheader(2), \
     $rt1 using 3 lc rgb '#2ca02c' title columnheader(3), \
     $rt1 using 4 lc rgb '#ff7f0e' title columnheader(4), \
     $rt1 using 5 lc rgb '#8c564b' title columnheader(5), \
     1 with lines dt 2 lc rgb 'black' notitle
set yrange [0:1.27]
set title 'inference time per example relative to softmax'
set ylabel '× softmax'
plot $rt2 using 2:xtic(1) lc rgb '#1f77b4' title columnheader(2), \
     $rt2 using 3 lc rgb '#2ca02c' title columnheader(3), \
     $rt2 using 4 lc rgb '#ff7f0e' title columnheader(4), \
     $rt2 using 5 lc rgb '#8c564b' title columnheader(5), \
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
set yrange [0:1.356]
set title 'training step time relative to softmax (median over seeds)'
set ylabel '× softmax'
plot $rt1 using 2:xtic(1) lc rgb '#1f77b4' title columnheader(2), \
     $rt1 using 3 lc rgb '#2ca02c' title columnheader(3), \
     $rt1 using 4 lc rgb '#ff7f0e' title columnheader(4), \
     $rt1 using 5 lc rgb '#8c564b' title columnheader(5), \
     1 with lines dt 2 lc rgb 'black' notitle
set yrange [0:1.27]
set title 'inference time per example relative to softmax'
set ylabel '× softmax'
plot $rt2 using 2:xtic(1) lc rgb '#1f77b4' title columnheader(2), \
     $rt2 using 3 lc rgb '#2ca02c' title columnheader(3), \
     $rt2 using 4 lc rgb '#ff7f0e' title columnheader(4), \
     $rt2 using 5 lc rgb '#8c564b' title columnheader(5), \
     1 with lines dt 2 lc rgb 'black' notitle
unset multiplot
unset output
