-- The report (lua/attnlab/report/init.lua, scripts/analyze.lua) on synthetic records written here,
-- with accuracies chosen so that every statistic has a closed form checked by hand:
--   Student t with df = 1, 2, 3 has an elementary CDF, so the two-sided p of t is
--     df = 1: p = 1 - (2/pi) atan|t|
--     df = 2: p = 1 - |t| / sqrt(2 + t^2)
--     df = 3: p = 1 - (2/pi) [atan(|t|/sqrt3) + (|t|/sqrt3) / (1 + t^2/3)]
--   and the 97.5% quantile for df = 2 is 0.95 sqrt(2 / (1 - 0.95^2)).
-- Differences are multiples of 1/64, so the paired differences are exact in binary.
-- al.stats is used only to check the plumbing of the Wilcoxon p and Cohen's d.
local al = require "attnlab"
local T = require "harness"

local report = al.report
local pi, sqrt, atan = math.pi, math.sqrt, math.atan
local sh = T.sh
local read = T.read_file

local DIR = sh("mktemp -d /tmp/attnlab-test-report.XXXXXX"):gsub("%s+$", "")

-- One synthetic finished record. RUNS: every run written (experiment.json lists them, as a sweep's does).
local RUNS = {}
local function rec(ds, norm, seed, acc, o)
  o = o or {}
  local r = {
    config = { dataset = ds, normalizer = norm, seed = seed, epochs = 1, batch_size = 128, lr = 0.001, dim = 64,
               depth = 2, heads = 4, padding = "positions" },
    test_accuracy = acc, support_density = o.density or 1.0, support_density_real = o.density or 1.0,
    train_s_per_step = o.train_s or 0.010, infer_s_per_example = o.infer_s or 0.001, alphas = o.alphas,
    epochs = { { epoch = 1, loss = 1.0, test_accuracy = acc } }, params = 1000, tokens = 17,
    git_revision = "abc123", machine = { cpu = "test cpu", blas = "none", threads = 1 },
    dataset = { name = ds, train = 100, test = 64 },
  }
  local name = ("%s__%s__seed%d"):format(ds, al.sweep.sanitize(norm), seed)
  RUNS[name] = { dataset = ds, normalizer = norm, seed = seed }
  assert(al.write_atomic(DIR .. "/" .. name .. ".json", al.json.encode(r, true)))
end

local BASE = { 0.5, 0.625, 0.75 }                       -- softmax on "synth", seeds 1-3
local ALPHAS = { { { 1.4, 1.5, 1.6, 1.7 }, { 1.5, 1.5, 1.5, 1.5 } },
                 { { 1.2, 1.5, 1.6, 1.9 }, { 1.5, 1.5, 1.5, 1.5 } },
                 { { 1.3, 1.5, 1.6, 1.8 }, { 1.5, 1.5, 1.5, 1.5 } } }

local function write_fixture()
  for s = 1, 3 do
    rec("synth", "softmax", s, BASE[s], { train_s = 0.010, infer_s = 0.001 })
    rec("synth", "sparsemax", s, BASE[s] + s / 64, { density = 0.5, train_s = 0.020, infer_s = 0.003 })  -- d = 1,2,3 /64
    rec("synth", "topk:0.25", s, BASE[s] + 2 / 64, { density = 0.25 })                               -- constant d
    rec("synth", "hae", s, BASE[s], { density = 0.8, alphas = ALPHAS[s] })                            -- d = 0
  end
  rec("synth", "entmax15", 1, BASE[1] + 1 / 64, { density = 0.9 })   -- seed 2 missing: d = 1, 3 /64
  rec("synth", "entmax15", 3, BASE[3] + 3 / 64, { density = 0.9 })
  rec("synth", "topk:0.5", 1, 0.6, { density = 0.5 })                 -- one seed only: no test
  for s = 1, 4 do                                                     -- synth2: d = 1,2,3,4 /64, df = 3
    rec("synth2", "softmax", s, 0.5)
    rec("synth2", "sparsemax", s, 0.5 + s / 64, { density = 0.5 })
  end
  rec("extra", "softmax", 1, 0.7)                                     -- outside the family
  rec("extra", "sparsemax", 1, 0.71)
  rec("extra", "softmax", 2, 0.72)
  rec("extra", "sparsemax", 2, 0.74)
  -- an error record, an unreadable file, and the temporary of an interrupted atomic write
  assert(al.write_atomic(DIR .. "/synth__sparsemax__seed4.json", al.json.encode({ error = "loss became NaN at epoch 3",
    attempts = 2, exit_status = 1, config = { dataset = "synth", normalizer = "sparsemax", seed = 4 } })))
  assert(al.write_atomic(DIR .. "/synth__softmax__seed9.json", '{"test_accuracy": 0.'))
  assert(al.write_atomic(DIR .. "/synth__softmax__seed5.json.tmp.AbC123", '{"test_accuracy": 0.9'))
  -- what the sweep writes next to the records: dataset order, study flags, families
  local exp = {
    name = "synthetic", baseline = "softmax", normalizers = { "softmax", "sparsemax", "entmax15", "hae", "topk:0.25", "topk:0.5" },
    datasets = { { name = "synth", dataset = "synth", study = true }, { name = "synth2", dataset = "synth2", study = true },
                 { name = "extra", dataset = "extra", study = false } },
    families = {
      { name = "sparse_vs_softmax", baseline = "softmax",
        normalizers = { "sparsemax", "entmax15", "hae", "topk:0.25", "topk:0.5" }, datasets = { "synth", "synth2" } },
      { name = "hae_vs_entmax15", title = "hae vs entmax15", baseline = "entmax15", normalizers = { "hae" }, datasets = { "synth" } },
    },
    runs = { ["synth__sparsemax__seed4"] = { dataset = "synth", normalizer = "sparsemax", seed = 4 },
             ["synth__softmax__seed7"] = { dataset = "synth", normalizer = "softmax", seed = 7 },
             ["synth__softmax__seed9"] = { dataset = "synth", normalizer = "softmax", seed = 9 } },
  }
  for name, r in pairs(RUNS) do exp.runs[name] = r end
  assert(al.write_atomic(DIR .. "/experiment.json", al.json.encode(exp)))
end

-- closed-form expectations
local P_DF1 = function(t) return 1 - 2 / pi * atan(math.abs(t)) end
local P_DF2 = function(t) return 1 - math.abs(t) / sqrt(2 + t * t) end
local P_DF3 = function(t)
  local u = math.abs(t) / sqrt(3)
  return 1 - 2 / pi * (atan(u) + u / (1 + t * t / 3))
end
local T_SPARSE = 2 * sqrt(3)        -- d = {1,2,3}/64: mean 2/64, sd 1/64, n = 3
local P_SPARSE = P_DF2(T_SPARSE)    -- = 1 - sqrt(6/7) = 0.0741799...
local T_ENT = 2                     -- d = {1,3}/64: mean 2/64, sd sqrt2/64, n = 2
local P_ENT = P_DF1(T_ENT)          -- 0.2951672...
local T_S2 = sqrt(15)               -- d = {1,2,3,4}/64: mean 2.5/64, sd sqrt(5/3)/64, n = 4
local P_S2 = P_DF3(T_S2)            -- 0.0304662...
-- Holm over the family as declared: 5 normalizers x 2 datasets = 10 comparisons, of which 3
-- have a test; the other 7 (synth: topk:0.25 no variance, hae identical samples, topk:0.5 one
-- pair; synth2: no records of entmax15, hae, topk:0.25, topk:0.5) enter as p = 1. Sorted p:
-- synth2 sparsemax (x10), synth sparsemax (x9), entmax15 (x8 > 1: capped), then the 1s.
local HOLM = { s2 = 10 * P_S2, sparse = 9 * P_SPARSE, ent = 1 }

local A
local function analysis()
  if not A then
    write_fixture()
    A = report.analyze(report.load(DIR))
  end
  return A
end
local function cmp(fam, ds, norm)
  for _, f in ipairs(analysis().families) do
    if f.name == fam then
      for _, c in ipairs(f.comparisons) do
        if c.dataset == ds and c.normalizer == norm then return c end
      end
    end
  end
  error(("no comparison %s/%s in family %s"):format(ds, norm, fam))
end

return {
  { name = "closed forms agree with the tabulated values (hand check of the oracle)", fn = function()
    T.close(P_SPARSE, 1 - sqrt(6 / 7), 1e-15)
    T.close(P_SPARSE, 0.0741799002274485, 1e-13)
    T.close(P_ENT, 0.295167235300866, 1e-13)
    T.close(P_S2, 0.030466291662171, 1e-13)
  end },
  { name = "load: records, error records, unreadable files; temporaries ignored", fn = function()
    local data = (analysis() and report.load(DIR))
    T.eq(#data.runs, 4 * 3 + 2 + 1 + 8 + 4)
    T.eq(#data.errors, 1)
    T.eq(data.errors[1].error, "loss became NaN at epoch 3")
    T.eq(#data.unreadable, 1)
    T.eq(data.unreadable[1].name, "synth__softmax__seed9")
    T.eq(analysis().datasets, { "synth", "synth2", "extra" })
    T.eq(analysis().missing, { "synth__softmax__seed7" }, 0, "expected runs without a record")
  end },
  { name = "paired t-test over 3 seeds: t = 2 sqrt3, p = 1 - sqrt(6/7), CI from the df=2 quantile", fn = function()
    local c = cmp("sparse_vs_softmax", "synth", "sparsemax")
    print(("# sparsemax vs softmax: t %.17g (want %.17g), p %.17g (want %.17g)"):format(c.t, T_SPARSE, c.p, P_SPARSE))
    T.eq({ c.n_pairs, c.df }, { 3, 2 })
    T.close(c.t, T_SPARSE, 0, 1e-12, "t")
    T.close(c.p, P_SPARSE, 0, 1e-12, "p")
    T.eq(c.mean_diff, 2 / 64, 0, "mean difference")
    local q = 0.95 * sqrt(2 / (1 - 0.95 ^ 2))
    local se = 1 / 64 / sqrt(3)
    T.close({ c.ci_low, c.ci_high }, { 2 / 64 - q * se, 2 / 64 + q * se }, 1e-12, 0, "95% CI")
    T.close(c.cohen_d, 2, 0, 1e-12, "Cohen's d = mean/sd = 2")
    T.eq(c.wilcoxon_p, al.stats.wilcoxon(c.a, c.b).p, 0, "Wilcoxon p (plumbing)")
    T.eq(c.wilcoxon_p, 0.25, 0, "exact Wilcoxon p for n=3, all positive: 2/8")
  end },
  { name = "missing seed: pairs matched by seed (1 and 3 of 3), df = 1: t = 2, p = 1 - (2/pi) atan 2", fn = function()
    local c = cmp("sparse_vs_softmax", "synth", "entmax15")
    T.eq({ c.n_pairs, c.seeds, c.only_base, c.only_x }, { 2, { 1, 3 }, { 2 }, {} })
    T.close(c.t, T_ENT, 0, 1e-12, "t")
    T.close(c.p, P_ENT, 0, 1e-12, "p")
  end },
  { name = "df = 3 on a second dataset of the family: t = sqrt15", fn = function()
    local c = cmp("sparse_vs_softmax", "synth2", "sparsemax")
    T.close(c.t, T_S2, 0, 1e-12, "t")
    T.close(c.p, P_S2, 0, 1e-12, "p")
  end },
  { name = "zero variance: constant difference and identical samples get no test (n/a), only their Δ", fn = function()
    local c = cmp("sparse_vs_softmax", "synth", "topk:0.25")
    T.eq({ c.na, c.t, c.p, c.ci_low, c.cohen_d, c.wilcoxon_p, c.holm, c.reject, c.mean_diff },
         { "no variance", nil, nil, nil, nil, nil, nil, false, 2 / 64 })
    local h = cmp("sparse_vs_softmax", "synth", "hae")
    T.eq({ h.na, h.t, h.p, h.holm, h.reject, h.mean_diff }, { "identical samples", nil, nil, nil, false, 0 })
  end },
  { name = "fewer than 2 matched seeds: no test, said so, kept in Holm's m as p = 1", fn = function()
    local c = cmp("sparse_vs_softmax", "synth", "topk:0.5")
    T.eq({ c.n_pairs, c.p, c.holm, c.na, c.reject }, { 1, nil, nil, "1 pair", false })
    T.close(c.mean_diff, 0.6 - 0.5, 1e-15, 0, "the one pair's Δ, descriptive")
    for _, f in ipairs(analysis().families) do
      if f.name == "sparse_vs_softmax" then
        T.eq({ #f.comparisons, f.m, #f.untested }, { 10, 10, 7 })
        local nores = cmp("sparse_vs_softmax", "synth2", "hae")
        T.eq({ nores.na, nores.n_pairs, nores.reject }, { "no records of hae", 0, false })
      end
    end
  end },
  { name = "Holm within the family (m = 10 as declared, untestable as p = 1): hand-computed step-down values", fn = function()
    T.close(cmp("sparse_vs_softmax", "synth2", "sparsemax").holm, HOLM.s2, 0, 1e-12)
    T.close(cmp("sparse_vs_softmax", "synth", "sparsemax").holm, HOLM.sparse, 0, 1e-12)
    T.close(cmp("sparse_vs_softmax", "synth", "entmax15").holm, HOLM.ent, 0, 1e-12)
    -- rejections at 0.05: p_(1) = 0.0305 > 0.05/10 stops at once
    for _, x in ipairs({ { "synth2", "sparsemax" }, { "synth", "sparsemax" }, { "synth", "entmax15" }, { "synth", "topk:0.25" } }) do
      T.eq(cmp("sparse_vs_softmax", x[1], x[2]).reject, false, 0, x[1] .. " " .. x[2] .. " reject")
    end
    print(("# Holm: synth2 sparsemax %.6f, sparsemax %.6f, entmax15 %.6f"):format(HOLM.s2, HOLM.sparse, HOLM.ent))
  end },
  { name = "hae vs entmax15 family: its own Holm (m = 1), matched seeds 1 and 3", fn = function()
    local c = cmp("hae_vs_entmax15", "synth", "hae")
    T.eq({ c.baseline, c.n_pairs }, { "entmax15", 2 })
    T.close(c.t, -2, 0, 1e-12, "t (hae - entmax15 = {-1, -3}/64)")
    T.close({ c.p, c.holm }, { P_ENT, P_ENT }, 0, 1e-12, "p, Holm p")
  end },
  { name = "dataset outside every family: uncorrected comparison, shown as such", fn = function()
    local c = analysis().vs_baseline.extra.sparsemax
    T.eq({ c.n_pairs, c.holm, c.family }, { 2, nil, nil })
    T.close(c.mean_diff, 0.015, 1e-12)
  end },
  { name = "group summaries, alphas per layer, runtime ratios", fn = function()
    local A_ = analysis()
    local g = A_.groups.synth.sparsemax
    T.eq({ g.n, g.seeds }, { 3, { 1, 2, 3 } })
    T.close(g.acc.mean, (0.5 + 0.625 + 0.75 + 6 / 64) / 3, 1e-15)
    T.close(g.density, 0.5, 1e-15)
    local a1
    for _, a in ipairs(A_.alphas) do if a.dataset == "synth" and a.layer == 1 then a1 = a end end
    T.eq({ a1.normalizer, a1.seeds, a1.min, a1.max }, { "hae", 3, 1.2, 1.9 })
    T.close(a1.mean, 1.55, 1e-12)
    T.close(a1.per_head, { 1.3, 1.5, 1.6, 1.8 }, 1e-12)
    T.close({ A_.runtime.synth.sparsemax.train_rel, A_.runtime.synth.sparsemax.infer_rel }, { 2, 3 }, 1e-12)
  end },
  { name = "Markdown: tables, inf/nan shown, unpaired seeds, error record, missing run", fn = function()
    local md = report.markdown(analysis())
    for _, want in ipairs({ "## synth\n", "## synth2\n", "## hae vs entmax15", "## Learned alphas", "## Runtime relative to softmax",
                            "| topk:0.25 | 3 |", "+3.12 [n/a (no variance)]", "| n/a (identical samples) |",
                            "unpaired softmax: 2", "| n/a (1 pair) |", "No test (n/a): ",
                            "Holm over all 10; 7 without a test (identical samples ×1, no variance ×1, 1 pair ×1, no records ×4)",
                            "loss became NaN at epoch 3", "synth__softmax__seed7",
                            "invalid record synth__softmax__seed9.json: not JSON (truncated?)", "1 invalid record (not counted)",
                            "`sparse_vs_softmax`", "2.00×", "3.00×", "(none)",
                            "| topk:0.5 | 1 | 60.00 |" }) do   -- one seed: its accuracy in %, no ± sd
      assert(md:find(want, 1, true), "the report lacks '" .. want .. "'")
    end
    for _, bad in ipairs({ "+inf", "-inf", "| nan |", "| *** |" }) do
      assert(not md:find(bad, 1, true), "a degenerate statistic is recorded: '" .. bad .. "'")
    end
    local topk = md:match("\n(| topk:0.25 | 3 |[^\n]*)")
    assert(topk:find("| n/a (no variance) | n/a (no variance) | n/a (counts as p = 1) | n/a | n/a (no variance) | n/a (no variance) |",
      1, true), topk)
    local row = md:match("\n(| sparsemax | 3 |[^\n]*)")
    print("# " .. row)
    assert(row:find(("%.3f"):format(T_SPARSE), 1, true) and row:find(("%.4f"):format(P_SPARSE), 1, true)
      and row:find(("%.4f"):format(HOLM.sparse), 1, true) and row:find("| ns |", 1, true), row)
  end },
  { name = "scripts/analyze.lua writes the report and plots (gnuplot PNG+SVG when installed, else SVG)", fn = function()
    local host = al.sweep.host()
    local out, rc = sh(("%s scripts/analyze.lua %s --out %s/R.md"):format(al.sweep.shquote(host), DIR, DIR))
    T.eq(rc, 0, 0, out)
    local md = read(DIR .. "/R.md")
    assert(md and md:find("## synth", 1, true), "R.md")
    local gp = os.execute("command -v gnuplot >/dev/null 2>&1") == true
    for _, f in ipairs({ "acc_vs_density_synth", "acc_vs_density_synth2", "runtime" }) do
      local svg = read(DIR .. "/plots/" .. f .. ".svg")
      assert(svg and svg:find("<svg", 1, true), f .. ".svg missing or not SVG")
      if gp then
        local png = read(DIR .. "/plots/" .. f .. ".png")
        assert(png and png:sub(1, 8) == "\137PNG\r\n\26\n", f .. ".png missing or not PNG")
      end
    end
    assert(md:find("](plots/acc_vs_density_synth.", 1, true), "plot links relative to the report")
    if not gp then print("# gnuplot not installed: only the SVG writer was exercised") end
    T.eq(sh(("ls %s/plots | grep -c '\\.tmp$'"):format(DIR)):gsub("%s+$", ""), "0", nil, "no temporary plot left")
  end },
  { name = "a failed gnuplot leaves the previous plots whole and no temporary file", fn = function()
    if os.execute("command -v gnuplot >/dev/null 2>&1") ~= true then
      T.skip("gnuplot not installed: its failure path is not exercised")
    end
    -- a stand-in gnuplot that writes half a file where it was told to, then fails
    local fake = DIR .. "/fakebin"
    os.execute("mkdir -p " .. fake)
    local f = assert(io.open(fake .. "/gnuplot", "w"))
    -- (as gnuplot does with its first `set output`: the temporary name given by -e, or the
    -- script's own output as the report wrote it before its plots were atomic)
    f:write([[#!/bin/sh
if [ "$1" = "-e" ]; then out=$(printf '%s' "$2" | sed -n "s/^svg_out = '\(.*\)'; png_out.*/\1/p")
else out=$(sed -n "s/^set output '\(.*\)'$/\1/p" "$1" | head -1); fi
printf '<svg half' > "$out"
echo 'gnuplot: killed' >&2
exit 1
]])
    f:close()
    os.execute("chmod +x " .. fake .. "/gnuplot")
    local plot = DIR .. "/plots/runtime.svg"
    local before = read(plot)
    assert(before and before:find("</svg>", 1, true), "the plot of the run before")
    local host = al.sweep.host()
    local out, rc = sh(("PATH=%s:$PATH %s scripts/analyze.lua %s --out %s/R.md"):format(al.sweep.shquote(fake),
      al.sweep.shquote(host), DIR, DIR))
    T.truthy(rc ~= 0, "analyze fails with gnuplot: " .. out)
    T.truthy(out:find("gnuplot failed on", 1, true) and out:find("gnuplot: killed", 1, true), out)
    T.eq(read(plot), before, nil, "runtime.svg untouched")
    T.eq(read(DIR .. "/plots/acc_vs_density_synth.svg"):find("<svg half", 1, true), nil, "no half plot")
    T.eq(sh(("ls %s/plots | grep -c '\\.tmp$'"):format(DIR)):gsub("%s+$", ""), "0", nil, "no temporary plot left")
  end },
  { name = "SVG writer (no gnuplot): scatter and bars are well-formed", fn = function()
    local p = report.plots(analysis(), DIR .. "/svg", { tool = "svg" })
    local svg = read(p.by_dataset.synth.svg)
    local _, circles = svg:gsub("<circle", "")
    T.eq(circles, 4 * 3 + 2 + 1, 0, "one point per seed and normalizer")
    assert(svg:find("sparsemax", 1, true) and svg:find("</svg>%s*$"), "legend / closing tag")
    local bars = read(p.runtime.svg)
    local _, opens = bars:gsub("<svg", "")
    local _, closes = bars:gsub("</svg>", "")
    T.eq({ opens, closes }, { 1, 1 }, 0, "runtime.svg nesting")
  end },
  { name = "errors only, or an empty folder: one line saying there is no finished record (no empty report)", fn = function()
    local d2 = DIR .. "/only_errors"
    sh("mkdir -p " .. d2)
    assert(al.write_atomic(d2 .. "/a__softmax__seed1.json", al.json.encode({ error = "boom", config = { normalizer = "softmax", seed = 1 } })))
    local msg = T.raises(function() report.run(d2, { plots = false }) end,
      "no finished records in " .. d2 .. "; 1 error record: a__softmax__seed1 (boom)")
    assert(not msg:find("\n"), msg)
    T.eq(read(d2 .. "/REPORT.md"), nil, 0, "no report written")
    T.raises(function() report.run(DIR .. "/empty_nonexistent", { plots = false }) end, "no finished records in")
  end },
  { name = "learning curves: per-epoch mean ± sd, paired Δ per epoch with its df = 2 t interval, table and plot", fn = function()
    -- softmax and top-k over 3 seeds and 3 epochs, accuracies in 1/64 steps (exact in binary);
    -- seed 3 of top-k ran a 2-epoch schedule, so epoch 3 pairs 2 seeds.
    local d3 = DIR .. "/curves"
    sh("mkdir -p " .. d3)
    local acc = { softmax = { { 0.25, 0.5, 0.625 }, { 0.375, 0.5, 0.75 }, { 0.25, 0.625, 0.75 } },
                  ["topk:0.25"] = { { 0.375, 0.5, 0.5 }, { 0.375, 0.625, 0.625 }, { 0.25, 0.75 } } }
    for n, seeds in pairs(acc) do
      for seed, eps in ipairs(seeds) do
        local e = {}
        for ep, a in ipairs(eps) do e[ep] = { epoch = ep, loss = 1, test_accuracy = a } end
        local r = { config = { dataset = "synth", normalizer = n, seed = seed, epochs = #eps }, test_accuracy = eps[#eps],
                    support_density = 1, epochs = e, machine = {}, git_revision = "x" }
        assert(al.write_atomic(("%s/synth__%s__seed%d.json"):format(d3, al.sweep.sanitize(n), seed), al.json.encode(r)))
      end
    end
    local md, A, plots = report.run(d3, { tool = "svg", baseline = "softmax" })
    local c = A.curves.synth
    T.eq(c.epochs, 3)
    T.close(c.softmax.mean, { 100 * (0.25 + 0.375 + 0.25) / 3, 100 * 1.625 / 3, 100 * 2.125 / 3 }, 1e-12)
    T.close(c.softmax.sd[1], 100 * 0.125 / math.sqrt(3), 1e-12)   -- values m, m+h, m: sd = h/sqrt3
    T.eq(c["topk:0.25"].n, { 3, 3, 2 })
    -- epoch 2 differences (pp): 0, +12.5, +12.5 -> mean 25/3, sd 12.5/sqrt3; CI half-width t(0.975, 2) sd / sqrt3
    local dl = c.delta["topk:0.25"]
    local t2 = 0.95 * math.sqrt(2 / (1 - 0.95 ^ 2))
    T.close(dl.mean[2], 25 / 3, 1e-12)
    T.close(dl.hi[2] - dl.mean[2], t2 * (12.5 / math.sqrt(3)) / math.sqrt(3), 1e-9)
    T.eq(dl.n[3], 2)
    T.close(dl.mean[3], (-12.5 - 12.5) / 2, 1e-12)
    assert(md:find("| 2 | 54.17 ± 7.22 | +8.33 [", 1, true), md)
    -- epoch 3: both pairs moved by -12.5 pp, a zero spread: the Δ without an interval
    T.eq({ dl.na[3], dl.lo[3] ~= dl.lo[3], dl.na[2] }, { "no variance", true, nil })
    assert(md:find("| 3 | 70.83 ± 7.22 | -12.50 [n/a (no variance)] |", 1, true), md)
    local svg = read(plots.curves.synth.svg)
    local _, polylines = svg:gsub("<polyline", "")
    T.eq(polylines, 2, 0, "one mean line per normalizer")
    assert(md:find("curve_synth.svg", 1, true), "the report links the curve")
  end },
  { name = "learning curves: the last epoch prints as the accuracy table does, also on a rounding tie", fn = function()
    -- The marker task of experiments/normalizers/main_2core, seeds 1-10: softmax's mean is
    -- 13.955 and hae's Δ +3.315, ties at two decimals. The curve summed 100 * accuracy in
    -- pairs() order and printed 13.95 / +3.32 where the table, summing the fractions in seed
    -- order, printed 13.95 / +3.31 (and 66.95 against 66.94 for kmnist_2core's softmax).
    local d5 = DIR .. "/curve_ties"
    sh("mkdir -p " .. d5)
    local acc = { softmax = { 0.1375, 0.147, 0.147, 0.138, 0.1355, 0.132, 0.1265, 0.1465, 0.1435, 0.142 },
                  hae = { 0.1775, 0.163, 0.159, 0.1645, 0.1935, 0.1595, 0.1715, 0.1685, 0.187, 0.183 } }
    for n, seeds in pairs(acc) do
      for seed, a in ipairs(seeds) do
        local r = { config = { dataset = "marker", normalizer = n, seed = seed, epochs = 2 }, test_accuracy = a,
                    support_density = 1, machine = {}, git_revision = "x",
                    epochs = { { epoch = 1, loss = 2, test_accuracy = a / 2 }, { epoch = 2, loss = 1, test_accuracy = a } } }
        assert(al.write_atomic(("%s/marker__%s__seed%d.json"):format(d5, n, seed), al.json.encode(r)))
      end
    end
    local md, A = report.run(d5, { plots = false, baseline = "softmax" })
    local g, cmp = A.groups.marker.softmax, nil
    for _, f in ipairs(A.families) do
      for _, c in ipairs(f.comparisons) do if c.dataset == "marker" and c.normalizer == "hae" then cmp = c end end
    end
    local cv = A.curves.marker
    T.eq({ cv.softmax.mean[2], cv.softmax.sd[2] }, { 100 * g.acc.mean, 100 * g.acc.sd }, 0, "softmax, bitwise")
    T.eq({ cv.delta.hae.mean[2], cv.delta.hae.lo[2], cv.delta.hae.hi[2] },
         { 100 * cmp.mean_diff, 100 * cmp.ci_low, 100 * cmp.ci_high }, 0, "hae's Δ and CI, bitwise")
    local row = md:match("\n(| hae | 10 | [^\n]*)")
    local delta = row and row:match("| ([+-][%d.]+ %[[^%]]+%]) |")
    assert(delta and md:find("| 2 | " .. ("%.2f ± %.2f"):format(100 * g.acc.mean, 100 * g.acc.sd) .. " | " .. delta, 1, true), md)
  end },
  { name = "impossible values: accuracy outside [0, 1], no normalizer or seed skipped loudly; bad baseline and families named", fn = function()
    local d4 = DIR .. "/impossible"
    sh("mkdir -p " .. d4)
    local function put(name, r)
      r.config.epochs = 1
      r.epochs = { { epoch = 1, loss = 1.0, test_accuracy = 0.5 } }
      assert(al.write_atomic(d4 .. "/" .. name .. ".json", al.json.encode(r)))
    end
    put("s__softmax__seed1", { config = { dataset = "s", normalizer = "softmax", seed = 1 }, test_accuracy = 0.5 })
    put("s__softmax__seed2", { config = { dataset = "s", normalizer = "softmax", seed = 2 }, test_accuracy = 2.5 })
    put("s__softmax__seed3", { config = { dataset = "s", normalizer = "softmax", seed = 3 }, test_accuracy = -0.1 })
    put("s__x__seed1", { config = { dataset = "s", seed = 1 }, test_accuracy = 0.5 })
    put("s__y__seed1", { config = { dataset = "s", normalizer = "sparsemax" }, test_accuracy = 0.5 })
    local data = report.load(d4)
    T.eq(#data.runs, 1)
    local why = {}
    for _, u in ipairs(data.unreadable) do why[u.name] = u.why end
    T.eq(why.s__softmax__seed2, "test_accuracy 2.5 is not in [0, 1]")
    T.eq(why.s__softmax__seed3, "test_accuracy -0.1 is not in [0, 1]")
    T.eq(why.s__x__seed1, "config.normalizer is missing or not a name")
    T.eq(why.s__y__seed1, "config.seed is missing, want a positive integer")
    local md = report.run(d4, { plots = false })
    assert(not md:find("250.00", 1, true), md)
    T.raises(function() report.run(d4, { plots = false, baseline = "foo" }) end, "baseline 'foo' has no records in " .. d4)
    assert(al.write_atomic(d4 .. "/experiment.json", '{"families":[{"name":"f","normalizers":5}]}'))
    T.raises(function() report.run(d4, { plots = false }) end, d4 .. "/experiment.json: families[1].normalizers must be")
    assert(al.write_atomic(d4 .. "/experiment.json", '{"families":[7]}'))
    T.raises(function() report.run(d4, { plots = false }) end, "families[1] must be an object, got 7")
  end },
  { name = "degenerate comparisons in a family: n/a and no stars, never rejected, m kept; the others keep their Holm p", fn = function()
    -- Family "deg" (m = 5 as declared) on 3 seeds: sparsemax d = {9,10,11}/64 (t = 10 sqrt3,
    -- df = 2), topk:0.25 d = {1,2,3}/64 (t = 2 sqrt3), and three without a test: entmax15
    -- d = +1/64 on every seed (a: no variance), hae identical to softmax (b), topk:0.5 on seed 1
    -- only (c; its seed 2 has test_accuracy 1e999 = inf and is listed as invalid). Holm:
    -- p(sparsemax) x5, p(topk:0.25) x4, then 1, 1, 1. Taking (a) as t = inf, p = 0 would make
    -- it *** and dropping (c) from m would give sparsemax x2. Family "probe": the defect's
    -- example {0.81, 0.83} vs {0.80, 0.82}, and 4 seeds whose differences are equal up to
    -- rounding only (ttest_rel: t ~ 4e14).
    local d5 = DIR .. "/degenerate"
    sh("mkdir -p " .. d5)
    local function put(ds, n, seed, acc)
      local inf = acc == math.huge
      local r = { config = { dataset = ds, normalizer = n, seed = seed, epochs = 1 }, test_accuracy = inf and 0.5 or acc,
                  support_density = 1, epochs = not inf and { { epoch = 1, loss = 1.0, test_accuracy = acc } } or nil,
                  machine = {}, git_revision = "x" }
      local txt = al.json.encode(r)
      if inf then txt = txt:gsub('"test_accuracy":0%.5', '"test_accuracy":1e999') end
      assert(al.write_atomic(("%s/%s__%s__seed%d.json"):format(d5, ds, al.sweep.sanitize(n), seed), txt))
    end
    local base = { 0.25, 0.375, 0.5 }
    for s = 1, 3 do
      put("deg", "softmax", s, base[s])
      put("deg", "sparsemax", s, base[s] + (8 + s) / 64)
      put("deg", "topk:0.25", s, base[s] + s / 64)
      put("deg", "entmax15", s, base[s] + 1 / 64)
      put("deg", "hae", s, base[s])
    end
    put("deg", "topk:0.5", 1, 0.3)
    put("deg", "topk:0.5", 2, math.huge)
    local p4a, p4b = { 0.30, 0.92, 0.56, 0.46 }, { 0.31, 0.93, 0.57, 0.47 }
    for s = 1, 4 do
      put("probe4", "softmax", s, p4a[s])
      put("probe4", "sparsemax", s, p4b[s])
    end
    put("probe", "softmax", 1, 0.80) put("probe", "softmax", 2, 0.82)
    put("probe", "sparsemax", 1, 0.81) put("probe", "sparsemax", 2, 0.83)
    assert(al.write_atomic(d5 .. "/experiment.json", al.json.encode({ name = "degenerate", baseline = "softmax",
      normalizers = { "softmax", "sparsemax", "topk:0.25", "entmax15", "hae", "topk:0.5" },
      datasets = { { name = "deg" }, { name = "probe" }, { name = "probe4" } },
      families = { { name = "deg", baseline = "softmax", normalizers = { "sparsemax", "topk:0.25", "entmax15", "hae", "topk:0.5" },
                     datasets = { "deg" } },
                   { name = "probe", baseline = "softmax", normalizers = { "sparsemax" }, datasets = { "probe", "probe4" } } } })))
    local md, A_ = report.run(d5, { plots = false })
    local by = {}
    for _, f in ipairs(A_.families) do by[f.name] = f end
    local function get(ds, n) return A_.vs_baseline[ds][n] end
    -- the inf accuracy never reaches a comparison: load skips it loudly
    T.eq(#A_.unreadable, 1)
    T.truthy(A_.unreadable[1].why:find("^not JSON %(truncated%?%): number 1e999 is out of the double range"),
      A_.unreadable[1].why)   -- (the decoder refuses 1e999: it was inf)
    -- (a), (b), (c): no statistic, not rejected, no Holm p; only the descriptive Δ
    local a, b, c = get("deg", "entmax15"), get("deg", "hae"), get("deg", "topk:0.5")
    T.eq({ a.na, a.t, a.p, a.ci_low, a.cohen_d, a.wilcoxon_p, a.holm, a.reject, a.mean_diff },
         { "no variance", nil, nil, nil, nil, nil, nil, false, 1 / 64 }, 0, "(a) ")
    T.eq({ b.na, b.t, b.p, b.holm, b.reject, b.mean_diff }, { "identical samples", nil, nil, nil, false, 0 }, 0, "(b) ")
    T.eq({ c.na, c.n_pairs, c.t, c.p, c.holm, c.reject }, { "1 pair", 1, nil, nil, nil, false }, 0, "(c) ")
    -- the tested two: their own t and p, Holm over m = 5 with the three at p = 1
    local P10 = 1 - sqrt(300 / 302)           -- df = 2: p = 1 - |t| / sqrt(2 + t^2), t^2 = 300
    local sp, tk = get("deg", "sparsemax"), get("deg", "topk:0.25")
    T.eq({ by.deg.m, #by.deg.untested }, { 5, 3 })
    T.close({ sp.t, sp.p, sp.holm }, { 10 * sqrt(3), P10, 5 * P10 }, 0, 1e-12, "sparsemax t, p, Holm p")
    T.close({ tk.t, tk.p, tk.holm }, { T_SPARSE, P_SPARSE, 4 * P_SPARSE }, 0, 1e-12, "topk:0.25 t, p, Holm p")
    T.eq({ sp.reject, tk.reject }, { true, false })
    -- the probes: no test for either, although ttest_rel gives t = inf and t ~ 4e14
    T.eq(al.stats.ttest_rel({ 0.81, 0.83 }, { 0.80, 0.82 }).t, math.huge)
    T.truthy(al.stats.ttest_rel(p4b, p4a).t > 1e14, "the rounding probe is finite but huge in ttest_rel")
    T.eq({ get("probe", "sparsemax").na, get("probe4", "sparsemax").na, by.probe.m, #by.probe.untested },
         { "no variance", "no variance", 2, 2 })
    T.close(get("probe", "sparsemax").mean_diff, 0.01, 1e-15)
    -- Markdown: n/a in every test cell, no stars, the reason under the table, the Families line
    local function row(n, ds)
      local sec = md:match("\n## " .. ds .. "\n(.-)\n## ")
      return assert(sec:match("\n(| " .. n:gsub("%p", "%%%0") .. " |[^\n]*)"), n .. " row in " .. ds)
    end
    local function cells(r) local t = {} for x in r:gmatch("|([^|]*)") do t[#t + 1] = x:match("^%s*(.-)%s*$") end return t end
    -- columns: normalizer seeds accuracy Δ pairs t p Holm-p sig Wilcoxon d density
    local ra, rb, rc = cells(row("entmax15", "deg")), cells(row("hae", "deg")), cells(row("topk:0.5", "deg"))
    T.eq({ ra[4], ra[6], ra[7], ra[8], ra[9], ra[10], ra[11] }, { "+1.56 [n/a (no variance)]", "n/a (no variance)",
      "n/a (no variance)", "n/a (counts as p = 1)", "n/a", "n/a (no variance)", "n/a (no variance)" }, 0, "(a) row ")
    T.eq({ rb[4], rb[6], rb[9] }, { "+0.00 [n/a (identical samples)]", "n/a (identical samples)", "n/a" }, 0, "(b) row ")
    T.eq({ rc[4], rc[5], rc[6], rc[9] }, { "+5.00 [n/a (1 pair)]", "1 (unpaired softmax: 2,3)", "n/a (1 pair)", "n/a" }, 0, "(c) row ")
    local rs, rt = cells(row("sparsemax", "deg")), cells(row("topk:0.25", "deg"))
    T.eq({ rs[8], rs[9], rt[8], rt[9] }, { ("%.4f"):format(5 * P10), "*", ("%.4f"):format(4 * P_SPARSE), "ns" })
    T.eq(cells(row("sparsemax", "probe"))[4], "+1.00 [n/a (no variance)]")
    T.eq(cells(row("sparsemax", "probe4"))[9], "n/a")
    for _, bad in ipairs({ "+inf", "-inf", "| nan", "| *** |" }) do
      assert(not md:find(bad, 1, true), "a degenerate statistic is recorded: '" .. bad .. "'\n" .. md)
    end
    assert(md:find("\nNo test (n/a): entmax15 — no variance: every matched seed gave the same Δ", 1, true), md)
    assert(md:find("; hae — identical samples: ", 1, true) and md:find("; topk:0.5 — 1 pair: ", 1, true), md)
    assert(md:find("`deg` (deg): 5 comparisons vs softmax, Holm over all 5; 3 without a test (no variance ×1, "
      .. "identical samples ×1, 1 pair ×1) count as p = 1, never rejected.", 1, true), md)
    -- the same through scripts/analyze.lua
    local out, rc_ = sh(("%s scripts/analyze.lua %s --no-plots"):format(al.sweep.shquote(al.sweep.host()), d5))
    T.eq(rc_, 0, 0, out)
    assert(out:find("| sparsemax | 2 | 82.00 ± 1.41 | +1.00 [n/a (no variance)] | 2 | n/a (no variance) |", 1, true)
      and not out:find("+inf", 1, true), out)
  end },
  { name = "p-values and stars: 4 decimals from 1e-4 up, else 1 significant digit; stars strictly below .05/.01/.001", fn = function()
    local MD = require "attnlab.report.markdown"
    local p = { 0.05, 0.0001, 9.9e-5, 5e-4, 0, 1 }
    local want = { "0.0500", "0.0001", "9.9e-05", "0.0005", "0", "1.0000" }
    for i = 1, #p do T.eq(MD.fmt_p(p[i]), want[i], nil, "fmt_p(" .. p[i] .. ") ") end
    -- the usual convention, with p equal to a threshold not beyond it
    local s = { [0.05] = "ns", [0.0499] = "*", [0.01] = "*", [0.0099] = "**", [0.007] = "**", [0.001] = "**",
                [0.00099] = "***", [1] = "ns" }
    for v, st in pairs(s) do T.eq(MD.stars(v), st, nil, "stars(" .. v .. ") ") end
    T.eq(MD.stars(0 / 0), "")
  end },
  { name = "(cleanup)", fn = function()
    assert(DIR:match("^/tmp/attnlab%-test%-report%.%w+$"))
    sh("rm -rf " .. DIR)
  end },
}
