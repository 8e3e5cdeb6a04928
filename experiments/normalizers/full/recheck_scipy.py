# experiments/normalizers/full/recheck_scipy.py -- an independent recomputation, with scipy, of
# the paired t-tests, 95% CIs and Holm p that scripts/analyze.lua reports for one family, read
# straight from the JSON records (it shares no code with attnlab). Needs python3-scipy.
#   /usr/bin/python3 experiments/normalizers/full/recheck_scipy.py \
#       experiments/normalizers/full/records/main cifar10,fashion_mnist,newsgroups20,marker
# prints one line per comparison vs softmax: label, normalizer, pairs, Δ (pp) [95% CI], p, Holm p
# over the labels given (the study's family of 24 for the four labels above).
import json, glob, os, re, sys
from scipy import stats
import numpy as np
d = sys.argv[1]
fam = sys.argv[2].split(",")          # labels of the Holm family
base = "softmax"
cells = {}
for f in glob.glob(os.path.join(d, "*.json")):
    m = re.match(r"^(.*?)__(.*?)__seed(\d+)\.json$", os.path.basename(f))
    if not m: continue
    r = json.load(open(f))
    if "test_accuracy" not in r: continue
    lab, norm, seed = m.group(1), r["config"]["normalizer"], int(m.group(3))
    cells.setdefault(lab, {}).setdefault(norm, {})[seed] = r["test_accuracy"]
rows = []
for lab in fam:
    for n in sorted(cells.get(lab, {})):
        if n == base: continue
        a, b = cells[lab][n], cells[lab][base]
        s = sorted(set(a) & set(b))
        if len(s) < 2: continue
        x = np.array([100 * a[i] for i in s]); y = np.array([100 * b[i] for i in s])
        t = stats.ttest_rel(x, y)
        dd = x - y
        h = stats.t.ppf(0.975, len(s) - 1) * dd.std(ddof=1) / np.sqrt(len(s))
        rows.append([lab, n, len(s), dd.mean(), dd.mean() - h, dd.mean() + h, t.pvalue])
m = len(rows)
order = sorted(range(m), key=lambda i: rows[i][6])
run = 0
for k, i in enumerate(order):
    run = max(run, min(1, (m - k) * rows[i][6])); rows[i].append(run)
for r in rows:
    print("%-20s %-11s n=%2d %+.2f [%+.2f, %+.2f] p=%.2g holm=%.2g" % tuple(r))
