set datafile missing '?'
$rt1 << EOD
dataset "softmax" "sparsemax" "entmax15" "hae" "topk:0.125" "topk:0.25" "topk:0.5"
"cifar10" 1 0.441284 0.432739 0.485407 0.430587 0.966064 0.428178
"fashion_mnist" 1 0.835041 0.789519 1.01737 1.19504 0.838063 0.904186
"newsgroups20" 1 1.12194 1.03713 0.981847 0.799263 0.83229 0.780665
"marker" 1 0.98646 1.19096 1.4055 1.09276 1.10005 1.24174
"newsgroups20_masked" 1 1.0408 1.23883 1.3498 0.899622 0.949352 1.08177
EOD
$rt2 << EOD
dataset "softmax" "sparsemax" "entmax15" "hae" "topk:0.125" "topk:0.25" "topk:0.5"
"cifar10" 1 0.540684 0.531952 0.493497 0.408338 1.03449 0.466083
"fashion_mnist" 1 0.842046 0.915321 1.10062 1.19429 0.948861 0.780216
"newsgroups20" 1 0.975635 0.645261 0.92267 0.788398 0.825784 0.865034
"marker" 1 1.30564 1.83 1.49351 1.44323 1.62437 1.30181
"newsgroups20_masked" 1 1.07787 1.01103 1.07692 1.00701 1.275 0.989532
EOD
set terminal svg size 880,560 dynamic noenhanced font 'Sans,12' background rgb 'white'
set output 'experiments/normalizers/full/plots/runtime.svg'
set multiplot layout 2,1
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set key outside right top
set grid ytics
set yrange [0:1.616]
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
set yrange [0:2.104]
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
set output 'experiments/normalizers/full/plots/runtime.png'
set multiplot layout 2,1
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set key outside right top
set grid ytics
set yrange [0:1.616]
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
set yrange [0:2.104]
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
