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

-- One synthetic finished record.
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
             ["synth__softmax__seed7"] = { dataset = "synth", normalizer = "softmax", seed = 7 } },
  }
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
-- Holm over the family's 5 tests: sorted p: topk 0 (x5), synth2 sparsemax (x4), synth sparsemax
-- (x3), entmax15 (x2), hae NaN -> 1 (x1); the running max leaves each product in place.
local HOLM = { topk = 0, s2 = 4 * P_S2, sparse = 3 * P_SPARSE, ent = 2 * P_ENT, hae = 1 }

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
  { name = "zero variance: constant difference t = +inf, p = 0; identical samples t = p = NaN; no crash", fn = function()
    local c = cmp("sparse_vs_softmax", "synth", "topk:0.25")
    T.eq({ c.t, c.p, c.mean_diff }, { math.huge, 0.0, 2 / 64 })
    local h = cmp("sparse_vs_softmax", "synth", "hae")
    assert(h.t ~= h.t and h.p ~= h.p, "identical samples should give NaN t and p")
    assert(h.wilcoxon_note and h.wilcoxon_note:find("zero"), "Wilcoxon on all-zero differences: " .. tostring(h.wilcoxon_note))
  end },
  { name = "fewer than 2 matched seeds: no test, said so, kept out of Holm's m", fn = function()
    local c = cmp("sparse_vs_softmax", "synth", "topk:0.5")
    T.eq({ c.n_pairs, c.p, c.holm, c.note }, { 1, nil, nil, "1 matched seed: no test" })
    for _, f in ipairs(analysis().families) do
      if f.name == "sparse_vs_softmax" then T.eq({ #f.comparisons, f.m }, { 6, 5 }) end
    end
  end },
  { name = "Holm within the family (m = 5, NaN p counted as 1): hand-computed step-down values", fn = function()
    T.close(cmp("sparse_vs_softmax", "synth", "topk:0.25").holm, HOLM.topk, 1e-15)
    T.close(cmp("sparse_vs_softmax", "synth2", "sparsemax").holm, HOLM.s2, 0, 1e-12)
    T.close(cmp("sparse_vs_softmax", "synth", "sparsemax").holm, HOLM.sparse, 0, 1e-12)
    T.close(cmp("sparse_vs_softmax", "synth", "entmax15").holm, HOLM.ent, 0, 1e-12)
    T.eq(cmp("sparse_vs_softmax", "synth", "hae").holm, HOLM.hae)
    -- rejections at 0.05: p_(1) = 0 <= 0.05/5; p_(2) = 0.0305 > 0.05/4 stops
    T.eq({ cmp("sparse_vs_softmax", "synth", "topk:0.25").reject, cmp("sparse_vs_softmax", "synth2", "sparsemax").reject },
         { true, false })
    print(("# Holm: topk 0, synth2 sparsemax %.6f, sparsemax %.6f, entmax15 %.6f, hae 1"):format(HOLM.s2, HOLM.sparse, HOLM.ent))
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
                            "| topk:0.25 | 3 |", "+inf", "| nan |", "unpaired softmax: 2", "1 matched seed: no test",
                            "loss became NaN at epoch 3", "synth__softmax__seed7", "unreadable record synth__softmax__seed9",
                            "`sparse_vs_softmax`", "2.00×", "3.00×", "(none)" }) do
      assert(md:find(want, 1, true), "the report lacks '" .. want .. "'")
    end
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
  { name = "errors only, or an empty folder: a clear message, no crash", fn = function()
    local d2 = DIR .. "/only_errors"
    sh("mkdir -p " .. d2)
    assert(al.write_atomic(d2 .. "/a__softmax__seed1.json", al.json.encode({ error = "boom", config = { normalizer = "softmax", seed = 1 } })))
    local md = report.run(d2, { plots = false })
    assert(md:find("boom", 1, true), md)
    T.raises(function() report.run(DIR .. "/empty_nonexistent", { plots = false }) end, "no records in")
  end },
  { name = "learning curves: per-epoch mean ± sd, paired Δ per epoch with its df = 2 t interval, table and plot", fn = function()
    -- softmax and top-k over 3 seeds and 3 epochs, accuracies in 1/64 steps (exact in binary);
    -- seed 3 of top-k stops after epoch 2, so epoch 3 pairs 2 seeds.
    local d3 = DIR .. "/curves"
    sh("mkdir -p " .. d3)
    local acc = { softmax = { { 0.25, 0.5, 0.625 }, { 0.375, 0.5, 0.75 }, { 0.25, 0.625, 0.75 } },
                  ["topk:0.25"] = { { 0.375, 0.5, 0.5 }, { 0.375, 0.625, 0.625 }, { 0.25, 0.75 } } }
    for n, seeds in pairs(acc) do
      for seed, eps in ipairs(seeds) do
        local e = {}
        for ep, a in ipairs(eps) do e[ep] = { epoch = ep, loss = 1, test_accuracy = a } end
        local r = { config = { dataset = "synth", normalizer = n, seed = seed, epochs = 3 }, test_accuracy = eps[#eps],
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
    local svg = read(plots.curves.synth.svg)
    local _, polylines = svg:gsub("<polyline", "")
    T.eq(polylines, 2, 0, "one mean line per normalizer")
    assert(md:find("curve_synth.svg", 1, true), "the report links the curve")
  end },
  { name = "impossible values: accuracy outside [0, 1], no normalizer or seed skipped loudly; bad baseline and families named", fn = function()
    local d4 = DIR .. "/impossible"
    sh("mkdir -p " .. d4)
    local function put(name, r) assert(al.write_atomic(d4 .. "/" .. name .. ".json", al.json.encode(r))) end
    put("s__softmax__seed1", { config = { dataset = "s", normalizer = "softmax", seed = 1 }, test_accuracy = 0.5 })
    put("s__softmax__seed2", { config = { dataset = "s", normalizer = "softmax", seed = 2 }, test_accuracy = 2.5 })
    put("s__softmax__seed3", { config = { dataset = "s", normalizer = "softmax", seed = 3 }, test_accuracy = -0.1 })
    put("s__x__seed1", { config = { dataset = "s", seed = 1 }, test_accuracy = 0.5 })
    put("s__y__seed1", { config = { dataset = "s", normalizer = "y" }, test_accuracy = 0.5 })
    local data = report.load(d4)
    T.eq(#data.runs, 1)
    local why = {}
    for _, u in ipairs(data.unreadable) do why[u.name] = u.why end
    T.eq(why.s__softmax__seed2, "test_accuracy 2.5 is not in [0, 1]")
    T.eq(why.s__softmax__seed3, "test_accuracy -0.1 is not in [0, 1]")
    T.eq(why.s__x__seed1, "config.normalizer is missing or not a name")
    T.eq(why.s__y__seed1, "config.seed is missing or not a number")
    local md = report.run(d4, { plots = false })
    assert(not md:find("250.00", 1, true), md)
    T.raises(function() report.run(d4, { plots = false, baseline = "foo" }) end, "baseline 'foo' has no records in " .. d4)
    assert(al.write_atomic(d4 .. "/experiment.json", '{"families":[{"name":"f","normalizers":5}]}'))
    T.raises(function() report.run(d4, { plots = false }) end, d4 .. "/experiment.json: families[1].normalizers must be")
    assert(al.write_atomic(d4 .. "/experiment.json", '{"families":[7]}'))
    T.raises(function() report.run(d4, { plots = false }) end, "families[1] must be an object, got 7")
  end },
  { name = "(cleanup)", fn = function()
    assert(DIR:match("^/tmp/attnlab%-test%-report%.%w+$"))
    sh("rm -rf " .. DIR)
  end },
}
