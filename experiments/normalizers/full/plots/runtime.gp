set datafile missing '?'
$rt1 << EOD
dataset "softmax" "sparsemax" "entmax15" "hae" "topk:0.125" "topk:0.25" "topk:0.5"
"cifar10" 1 0.441284 0.432739 0.485407 0.430587 0.966064 0.428178
"fashion_mnist" 1 0.835041 0.789519 1.01737 1.19504 0.838063 0.904186
"newsgroups20" 1 1.12194 1.03713 0.981847 0.799263 0.83229 0.780665
"marker" 1 1.05182 1.06665 1.30612 1.12594 1.06019 1.13886
"newsgroups20_masked" 1 1.06181 1.18095 1.2856 1.03558 0.976449 0.962343
EOD
$rt2 << EOD
dataset "softmax" "sparsemax" "entmax15" "hae" "topk:0.125" "topk:0.25" "topk:0.5"
"cifar10" 1 0.540684 0.531952 0.493497 0.408338 1.03449 0.466083
"fashion_mnist" 1 0.842046 0.915321 1.10062 1.19429 0.948861 0.780216
"newsgroups20" 1 0.975635 0.645261 0.92267 0.788398 0.825784 0.865034
"marker" 1 0.986275 0.957338 1.13063 0.972231 0.982056 0.987501
"newsgroups20_masked" 1 1.05916 1.16437 1.21724 0.887757 0.960242 0.931156
EOD
if (!exists('svg_out')) svg_out = 'experiments/normalizers/full/plots/runtime.svg'
if (!exists('png_out')) png_out = 'experiments/normalizers/full/plots/runtime.png'
set terminal svg size 880,560 dynamic noenhanced font 'Sans,12' background rgb 'white'
set output svg_out
set multiplot layout 2,1
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set key outside right top
set grid ytics
set yrange [0:1.502]
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
set yrange [0:1.4]
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
set yrange [0:1.502]
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
set yrange [0:1.4]
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
