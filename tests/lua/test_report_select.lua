-- attnlab.report.selection (choose on validation, test once) and attnlab.report.robustness
-- (does a Δ keep its sign across two conditions), on synthetic records written here, and the
-- two experiment scripts that use them. Accuracies differ by multiples of 1/64, so every
-- difference is exact in binary and each statistic has a closed form:
--   three pairs with d = {1,2,3} h (h = 100/64 pp): mean 2h, sd h, t = 2 sqrt3, df = 2,
--   p = 1 - |t| / sqrt(2 + t^2) = 1 - sqrt(6/7), CI half-width t(0.975, 2) h / sqrt3
--   with t(0.975, 2) = 0.95 sqrt(2 / (1 - 0.95^2)).
local al = require "attnlab"
local T = require "harness"

local sh, read = T.sh, T.read_file
local sel, rob = al.report.selection, al.report.robustness

local ROOT = sh("mktemp -d /tmp/attnlab-test-select.XXXXXX"):gsub("%s+$", "")
local H = 100 / 64
local T23 = 2 * math.sqrt(3)
local P23 = 1 - math.sqrt(6 / 7)
local Q2 = 0.95 * math.sqrt(2 / (1 - 0.95 ^ 2))

-- One synthetic finished record in dir; val = last epoch's val_accuracy (nil: none).
local function rec(dir, ds, norm, seed, acc, val)
  local last = { epoch = 2, loss = 1.0, test_accuracy = acc, val_accuracy = val }
  local r = {
    config = { dataset = ds, normalizer = norm, seed = seed, epochs = 2, val = val and 500 or 0 },
    test_accuracy = acc, support_density = 1.0, train_s_per_step = 0.01, infer_s_per_example = 0.001,
    epochs = { { epoch = 1, loss = 2.0, test_accuracy = 0.1, val_accuracy = val and 0.9 or nil }, last },
  }
  sh("mkdir -p " .. dir)
  local name = ("%s__%s__seed%d"):format(ds, al.sweep.sanitize(norm), seed)
  assert(al.write_atomic(dir .. "/" .. name .. ".json", al.json.encode(r, true)))
end

-- Validation fixture. On "img": topk:0.25 has the best validation mean over the common seeds
-- 1-3 and is chosen although topk:0.5 has the best test accuracy (the test set must not
-- choose). Its seed 4 (validation 0.99, no other candidate has it) must not enter the choice,
-- and softmax has no seed 4, so the confirmatory test has 3 pairs, d = {1,2,3}/64.
-- On "tie": topk:0.125 and topk:0.25 have equal validation means; the first listed wins.
local VDIR = ROOT .. "/val"
local function write_val_fixture()
  for s = 1, 3 do
    rec(VDIR, "img", "softmax", s, 0.5, 0.70)
    rec(VDIR, "img", "topk:0.125", s, 0.5, 0.80)
    rec(VDIR, "img", "topk:0.25", s, 0.5 + s / 64, 0.81)
    rec(VDIR, "img", "topk:0.5", s, 0.9, 0.805)
    rec(VDIR, "tie", "softmax", s, 0.5, 0.6)
    rec(VDIR, "tie", "topk:0.125", s, 0.5 - s / 64, 0.75)
    rec(VDIR, "tie", "topk:0.25", s, 0.6, 0.75)
    rec(VDIR, "tie", "topk:0.5", s, 0.6, 0.5)
  end
  rec(VDIR, "img", "topk:0.25", 4, 0.95, 0.99)
end

local CANDS = { "topk:0.125", "topk:0.25", "topk:0.5" }

return {
  { name = "selection: chosen on validation over common seeds, never on test; one paired test", fn = function()
    write_val_fixture()
    local S = sel.select(al.report.load(VDIR), { baseline = "softmax", candidates = CANDS })
    T.eq(#S.datasets, 2)
    local img, tie = S.datasets[1], S.datasets[2]
    T.eq(img.label, "img")
    T.eq(img.chosen, "topk:0.25", 0, "best validation mean, not best test (topk:0.5)")
    T.eq(img.common_seeds, { 1, 2, 3 }, 0, "seed 4 exists for one candidate only")
    T.close(img.val["topk:0.25"], 0.81, 1e-12, 0, "seed 4's 0.99 left out of the choice")
    T.eq(img.test.n, 3)
    T.close(img.test.mean_diff, 2 * H, 1e-12)
    T.close(img.test.t, T23, 1e-12)
    T.close(img.test.p, P23, 1e-12)
    T.close(img.test.ci_high - img.test.mean_diff, Q2 * H / math.sqrt(3), 1e-9)
    T.eq(tie.chosen, "topk:0.125", 0, "a tie goes to the candidate listed first")
    T.close(tie.test.mean_diff, -2 * H, 1e-12)
    T.close(tie.test.p, P23, 1e-12)
    -- the descriptive table gives every candidate's test Δ: topk:0.5's +40 pp is there, unchosen;
    -- it is +40 on every seed (0.9 vs 0.5), so it has no test: no CI, no p
    T.eq(img.descriptive["topk:0.5"], nil)
    T.eq({ img.descriptive_na["topk:0.5"].why, img.descriptive_na["topk:0.5"].n }, { "no variance", 3 })
    T.close(img.descriptive_na["topk:0.5"].mean_diff, 40, 1e-9)
    local md = sel.markdown(S)
    assert(md:find(("| img | topk:0.25 | topk:0.125 80.00, topk:0.25 81.00, topk:0.5 80.50 (3) | %+.2f ["):format(2 * H),
      1, true), md)
    assert(md:find("Descriptive only", 1, true), md)
    assert(md:find("| +40.00 [n/a (no variance)], 3 |", 1, true), md)
    assert(md:find("\nNo test (n/a): img topk:0.125 — identical samples: the same accuracy on every matched seed, "
      .. "Δ = 0 with no spread; img topk:0.5, tie topk:0.25, tie topk:0.5 — no variance: ", 1, true), md)
  end },
  { name = "selection: a seed only the first-listed candidate has is not common (no error, no effect)", fn = function()
    -- the main fixture's extra seed belongs to the second candidate; here the first one
    -- (whose seeds the common set is drawn from) has seed 4 with validation 0.99
    local d = ROOT .. "/firstextra"
    for s = 1, 3 do
      rec(d, "img", "softmax", s, 0.5, 0.70)
      rec(d, "img", "topk:0.125", s, 0.5, 0.80)
      rec(d, "img", "topk:0.25", s, 0.5 + s / 64, 0.81)
      rec(d, "img", "topk:0.5", s, 0.6, 0.805)
    end
    rec(d, "img", "topk:0.125", 4, 0.5, 0.99)
    local S = sel.select(al.report.load(d), { baseline = "softmax", candidates = CANDS })
    local img = S.datasets[1]
    T.eq(img.common_seeds, { 1, 2, 3 }, 0, "seed 4 exists for the first candidate only")
    T.close(img.val["topk:0.125"], 0.80, 1e-12, 0, "seed 4's 0.99 left out of the choice")
    T.eq(img.chosen, "topk:0.25")
    T.close(img.test.t, T23, 1e-12)
  end },
  { name = "selection: a record without validation accuracy is an error naming it", fn = function()
    local d = ROOT .. "/noval"
    rec(d, "img", "softmax", 1, 0.5, 0.7)
    rec(d, "img", "topk:0.125", 1, 0.5, 0.7)
    rec(d, "img", "topk:0.25", 1, 0.5, nil)
    rec(d, "img", "topk:0.5", 1, 0.5, 0.7)
    T.raises(function() sel.select(al.report.load(d), { baseline = "softmax", candidates = CANDS }) end,
      "img__topk-0.25__seed1 has no val_accuracy")
    T.raises(function() sel.select(al.report.load(d), { candidates = CANDS }) end, "opts.baseline")
    T.raises(function() sel.select({}, { baseline = "softmax", candidates = CANDS }) end, "al.report.load")
  end },
  { name = "selection: no record of any candidate (or of the baseline) is one line; unrelated labels get no row", fn = function()
    local d = ROOT .. "/nocand"
    rec(d, "img", "softmax", 1, 0.5, 0.7)
    rec(d, "img", "sparsemax", 1, 0.5, 0.7)
    T.raises(function() sel.select(al.report.load(d), { baseline = "softmax", candidates = CANDS }) end,
      "no records of topk:0.125, topk:0.25, topk:0.5 in " .. d)
    local d2 = ROOT .. "/nobase"
    rec(d2, "img", "topk:0.25", 1, 0.5, 0.7)
    T.raises(function() sel.select(al.report.load(d2), { baseline = "softmax", candidates = CANDS }) end,
      "no records of the baseline softmax in " .. d2)
    -- a label with neither the baseline nor a candidate ("other") is no row of "no seed has a record"
    for _, n in ipairs({ "softmax", "topk:0.125", "topk:0.25", "topk:0.5" }) do rec(d, "img", n, 1, 0.5, 0.7) end
    rec(d, "other", "sparsemax", 1, 0.5, 0.7)
    local S = sel.select(al.report.load(d), { baseline = "softmax", candidates = CANDS })
    T.eq(#S.datasets, 1)
    T.eq(S.datasets[1].label, "img")
  end },
  { name = "selection: fewer than 2 pairs is said, not tested", fn = function()
    local d = ROOT .. "/one"
    for _, n in ipairs({ "softmax", "topk:0.125", "topk:0.25", "topk:0.5" }) do rec(d, "img", n, 1, 0.5, 0.7) end
    local S = sel.select(al.report.load(d), { baseline = "softmax", candidates = CANDS })
    T.eq(S.datasets[1].test, nil)
    T.eq({ S.datasets[1].test_na.why, S.datasets[1].test_na.n, S.datasets[1].test_na.mean_diff }, { "1 pair", 1, 0 })
    T.eq(S.datasets[1].why, "no test of topk:0.125 vs softmax: n/a (1 pair)")
    local md = sel.markdown(S)
    assert(md:find("| img | topk:0.125 | topk:0.125 70.00, topk:0.25 70.00, topk:0.5 70.00 (1) | +0.00 [n/a (1 pair)] | 1 "
      .. "| n/a (1 pair) | n/a (1 pair) |", 1, true), md)
    assert(md:find("\nNo test (n/a): img topk:0.125 — 1 pair: one matched seed", 1, true), md)
  end },
  { name = "selection: a chosen candidate with a constant or identical Δ, or a non-finite accuracy, gets no test", fn = function()
    -- "flat": topk:0.125 (chosen: best validation) is softmax + 2/64 on every seed (no
    -- variance: ttest_rel would say t = inf, p = 0), topk:0.25 equals softmax (identical),
    -- topk:0.5 has d = {1,2,3}/64 (a real test, descriptive only)
    local d = ROOT .. "/flat"
    for s = 1, 3 do
      rec(d, "flat", "softmax", s, 0.5 + s / 64, 0.7)
      rec(d, "flat", "topk:0.125", s, 0.5 + (s + 2) / 64, 0.9)
      rec(d, "flat", "topk:0.25", s, 0.5 + s / 64, 0.8)
      rec(d, "flat", "topk:0.5", s, 0.5 + 2 * s / 64, 0.6)
    end
    local data = al.report.load(d)
    local S = sel.select(data, { baseline = "softmax", candidates = CANDS })
    local row = S.datasets[1]
    T.eq({ row.chosen, row.test, row.test_na.why, row.test_na.n }, { "topk:0.125", nil, "no variance", 3 })
    T.close(row.test_na.mean_diff, 2 * H, 1e-12)
    T.eq({ row.descriptive["topk:0.125"], row.descriptive["topk:0.25"], row.descriptive_na["topk:0.25"].why },
         { nil, nil, "identical samples" })
    T.close(row.descriptive["topk:0.5"].p, P23, 1e-12)
    local md = sel.markdown(S)
    assert(md:find(("| flat | topk:0.125 | topk:0.125 90.00, topk:0.25 80.00, topk:0.5 60.00 (3) | %+.2f [n/a (no variance)] | 3 "
      .. "| n/a (no variance) | n/a (no variance) |"):format(2 * H), 1, true), md)
    assert(md:find("\nNo test (n/a): flat topk:0.125 — no variance: ", 1, true), md)
    assert(md:find(("| flat | %+.2f [n/a (no variance)], 3 | +0.00 [n/a (identical samples)], 3 | %+.2f ["):format(2 * H, 2 * H),
      1, true), md)
    assert(not md:find("| inf |", 1, true) and not md:find("| 0 |", 1, true), md)   -- t and p of ttest_rel
    -- a non-finite accuracy (not from al.report.load, which refuses it; from a caller's table)
    data.runs[#data.runs + 1] = { label = "odd", normalizer = "softmax", seed = 1, acc = 0.5, record = data.runs[1].record }
    data.runs[#data.runs + 1] = { label = "odd", normalizer = "softmax", seed = 2, acc = 0.5, record = data.runs[1].record }
    for _, c in ipairs(CANDS) do
      for seed = 1, 2 do
        data.runs[#data.runs + 1] = { label = "odd", normalizer = c, seed = seed, acc = seed == 2 and math.huge or 0.6,
                                      record = data.runs[1].record }
      end
    end
    S = sel.select(data, { baseline = "softmax", candidates = CANDS, labels = { "odd" } })
    T.eq({ S.datasets[1].test, S.datasets[1].test_na.why, S.datasets[1].test_na.mean_diff }, { nil, "non-finite value", nil })
    assert(sel.markdown(S):find("| odd | topk:0.125 | topk:0.125 70.00, topk:0.25 70.00, topk:0.5 70.00 (2) | n/a (non-finite value) | 2 "
      .. "| n/a (non-finite value) | n/a (non-finite value) |", 1, true), sel.markdown(S))
    -- a non-finite validation score is refused like a missing one (a NaN mean would win the choice)
    local bad = al.json.decode(al.json.encode(data.runs[1].record))
    bad.epochs[#bad.epochs].val_accuracy = math.huge
    data.runs[#data.runs + 1] = { label = "odd2", normalizer = "topk:0.125", seed = 1, acc = 0.5, record = bad, name = "odd2_run" }
    T.raises(function() sel.select(data, { baseline = "softmax", candidates = CANDS, labels = { "odd2" } }) end,
      "odd2_run has no val_accuracy")
  end },
  { name = "robustness: identical samples are zero, a non-finite Δ is said, neither tested", fn = function()
    local function run(label, n, seed, acc) return { label = label, normalizer = n, seed = seed, acc = acc, record = {} } end
    local A = { runs = { run("x", "softmax", 1, 0.5), run("x", "softmax", 2, 0.6), run("x", "hae", 1, 0.5), run("x", "hae", 2, 0.6) } }
    local B = { runs = { run("x", "softmax", 1, 0.5), run("x", "softmax", 2, 0.6), run("x", "hae", 1, 0.7), run("x", "hae", 2, 0 / 0) } }
    local R = rob.compare(A, B, { baseline = "softmax", a_name = "p", b_name = "q" })
    local r = R.rows[1]
    T.eq({ r.a_all, r.a_all_na.why, r.a_all_na.mean_diff, r.b, r.b_na.why, r.change, r.change_na.why },
         { nil, "identical samples", 0, nil, "non-finite value", nil, "non-finite value" })
    T.eq(r.verdict, "a non-finite Δ under q")
    local md = rob.markdown(R)
    assert(md:find("| x | hae | +0.00 [n/a (identical samples)], 2 | +0.00 [n/a (identical samples)], 2 | n/a (non-finite value), 2 "
      .. "| p n/a (non-finite value) | a non-finite Δ under q |", 1, true), md)
    assert(not md:find("nan", 1, true), md)
  end },
  { name = "robustness: Δ on matched seeds, the paired change, and each sign verdict", fn = function()
    local A, B = ROOT .. "/torch", ROOT .. "/timm"
    for s = 1, 4 do
      rec(A, "img", "softmax", s, 0.5)
      rec(A, "img", "entmax15", s, 0.5 + s / 64)       -- Δ_A = {1,2,3,4} h; on B's seeds {1,2,3} h
    end
    for s = 1, 3 do
      rec(A, "img", "topk:0.25", s, 0.5 + 1 / 64)      -- constant +h: no variance, no CI (ttest_rel: [h, h])
      rec(A, "img", "sparsemax", s, 0.5 + 1 / 64)
      rec(B, "img", "softmax", s, 0.5)
      rec(B, "img", "entmax15", s, 0.5 - s / 64)       -- Δ_B = {-1,-2,-3} h: CI includes 0
      rec(B, "img", "topk:0.25", s, 0.5 - 1 / 64)      -- constant -h: a sign change, but no test
      rec(B, "img", "sparsemax", s, 0.5 + 2 / 64)      -- constant +2h: same sign, no test either
    end
    local R = rob.compare(al.report.load(A), al.report.load(B), { baseline = "softmax", a_name = "torch", b_name = "timm" })
    local by = {}
    for _, r in ipairs(R.rows) do by[r.normalizer] = r end
    T.eq(#R.rows, 3)
    T.eq({ R.baseline_acc[1].a.n, R.baseline_acc[1].b.n }, { 4, 3 }, 0, "softmax's own seeds per condition")
    T.close(R.baseline_acc[1].a.mean, 50, 1e-12)
    local e = by.entmax15
    T.eq(e.a_all.n, 4)
    T.close(e.a_all.mean_diff, 2.5 * H, 1e-12)
    T.close(e.a_all.t, math.sqrt(15), 1e-12)          -- d = {1,2,3,4} h: mean 2.5h, sd sqrt(5/3) h
    T.eq(e.common_seeds, { 1, 2, 3 })
    T.close(e.a_common.t, T23, 1e-12)
    T.close(e.b.t, -T23, 1e-12)
    -- change per seed: {-2,-4,-6} h: mean -4h, sd 2h, t = -2 sqrt3
    T.close(e.change.mean_diff, -4 * H, 1e-12)
    T.close(e.change.p, P23, 1e-12)
    T.eq(e.verdict, "changes sign (not significant under torch or timm)")
    -- constant Δs: ttest_rel's [m, m] "excludes 0" from no spread at all; the report tests
    -- nothing there, keeps the means, and its verdict claims no significance
    local tk, sp = by["topk:0.25"], by.sparsemax
    T.eq({ tk.a_common, tk.b, tk.change, tk.a_common_na.why, tk.b_na.why, tk.change_na.why },
         { nil, nil, nil, "no variance", "no variance", "no variance" })
    T.close({ tk.a_common_na.mean_diff, tk.b_na.mean_diff, tk.change_na.mean_diff }, { H, -H, -2 * H }, 1e-12)
    T.eq(tk.verdict, "changes sign (no test under torch or timm: no variance)")
    T.eq(sp.verdict, "keeps its sign (no test under torch or timm: no variance)")
    T.eq(rob.verdict({ mean_diff = 1, ci_low = 0.5, ci_high = 1.5 }, { mean_diff = -1, ci_low = -1.5, ci_high = -0.5 }, "a", "b"),
      "reverses")
    T.eq(rob.verdict({ mean_diff = 1, ci_low = 0.5, ci_high = 1.5 }, { mean_diff = 2, ci_low = 1, ci_high = 3 }, "a", "b"),
      "keeps its sign (significant under both)")
    -- a zero-width CI handed in directly is no evidence either
    T.eq(rob.verdict({ mean_diff = 1, ci_low = 1, ci_high = 1 }, { mean_diff = -2, ci_low = -3, ci_high = -1 }, "a", "b"),
      "changes sign (no test under a: no variance)")
    T.eq(rob.verdict({ mean_diff = -1, ci_low = -2, ci_high = 1 }, nil, "a", "b", nil, { why = "no variance", mean_diff = 1, n = 3 }),
      "changes sign (not significant under a; no test under b: no variance)")
    T.eq(rob.verdict({ mean_diff = 1, ci_low = -1, ci_high = 3 }, { mean_diff = 2, ci_low = 1, ci_high = 3 }, "a", "b"),
      "keeps its sign")
    T.eq(rob.verdict(nil, { mean_diff = 2, ci_low = 1, ci_high = 3 }, "a", "b"), "fewer than 2 paired seeds under a")
    T.eq(rob.verdict(nil, nil, "a", "b"), "fewer than 2 paired seeds under a and b")
    T.eq(rob.verdict({ mean_diff = 0, ci_low = -1, ci_high = 1 }, { mean_diff = 2, ci_low = 1, ci_high = 3 }, "a", "b"),
      "zero under a")
    local md = rob.markdown(R)
    assert(md:find(("| img | entmax15 | %+.2f ["):format(2.5 * H), 1, true), md)
    assert(md:find(("| img | topk:0.25 | %+.2f [n/a (no variance)], 3 | %+.2f [n/a (no variance)], 3 | %+.2f [n/a (no variance)], 3 "
      .. "| %+.2f, p n/a (no variance) | changes sign (no test under torch or timm: no variance) |"):format(H, H, -H, -2 * H), 1, true), md)
    assert(not md:find(", p = 0 |", 1, true) and not md:find("significant under both", 1, true), md)
    assert(md:find("\nNo test (n/a): img sparsemax (torch, torch on timm's seeds, timm, change), img topk:0.25 (torch, "
      .. "torch on timm's seeds, timm, change) — no variance: ", 1, true), md)
    assert(md:find("| img | 50.00 ± 0.00, 4 seeds | 50.00 ± 0.00, 3 seeds |", 1, true), md)
    T.raises(function() rob.compare(al.report.load(A), al.report.load(B), { baseline = "nope" }) end,
      "img: condition B has no nope record")
  end },
  { name = "robustness: two labels of one folder (opts.labels), rows under A's label", fn = function()
    -- Unmasked ("newsgroups20"): Δ_A = {1,2,3} h; masked: Δ_B = {2,4,6} h on the same seeds,
    -- so the change is {1,2,3} h: mean 2h, t = 2 sqrt3. An unmapped label ("img") is left out.
    local D = ROOT .. "/mask"
    for s = 1, 3 do
      rec(D, "newsgroups20", "softmax", s, 0.5)
      rec(D, "newsgroups20", "sparsemax", s, 0.5 + s / 64)
      rec(D, "newsgroups20_masked", "softmax", s, 0.25)
      rec(D, "newsgroups20_masked", "sparsemax", s, 0.25 + 2 * s / 64)
      rec(D, "img", "softmax", s, 0.5)
      rec(D, "img", "sparsemax", s, 0.5 - s / 64)
    end
    local data = al.report.load(D)
    local R = rob.compare(data, data, { baseline = "softmax", a_name = "unmasked", b_name = "masked",
                                        labels = { newsgroups20_masked = "newsgroups20" } })
    T.eq(#R.rows, 1)
    local r = R.rows[1]
    T.eq({ r.label, r.normalizer }, { "newsgroups20", "sparsemax" })
    T.close(r.a_all.mean_diff, 2 * H, 1e-12)
    T.close(r.b.mean_diff, 4 * H, 1e-12)
    T.close(r.change.mean_diff, 2 * H, 1e-12)
    T.close(r.change.t, T23, 1e-12)
    T.close(r.change.p, P23, 1e-12)
    T.close(r.a_all.ci_low, 2 * H - Q2 * H / math.sqrt(3), 1e-9)   -- below 0: not significant under A
    T.eq(r.verdict, "keeps its sign")
    T.close(R.baseline_acc[1].a.mean, 50, 1e-12)
    T.close(R.baseline_acc[1].b.mean, 25, 1e-12)
    T.raises(function() rob.compare(data, data, { baseline = "softmax", labels = { nope = "img" } }) end,
      "condition B has no records labelled nope")
    T.raises(function() rob.compare(data, data, { baseline = "softmax", labels = {} }) end,
      "opts.labels must be a non-empty map")
    local host = al.sweep.shquote(al.sweep.host())
    local out, rc = sh(("%s experiments/normalizers/full/masking.lua %s 2>&1"):format(host, D))
    T.eq(rc, 0, 0, out)
    assert(out:find(("| newsgroups20 | sparsemax | %+.2f ["):format(2 * H), 1, true) and not out:find("| img |", 1, true), out)
    for s = 1, 2 do rec(ROOT .. "/plain", "img", "softmax", s, 0.5) end
    out, rc = sh(("%s experiments/normalizers/full/masking.lua %s/plain 2>&1"):format(host, ROOT))
    assert(rc ~= 0 and select(2, out:gsub("\n", "")) == 1, out)
    assert(out:find("has no records labelled newsgroups20_masked", 1, true) and not out:find("traceback", 1, true), out)
  end },
  { name = "experiment scripts val_topk.lua and init_sign.lua: tables, and one clear line on bad input", fn = function()
    local host = al.sweep.shquote(al.sweep.host())
    local out, rc = sh(("%s experiments/normalizers/full/val_topk.lua %s --out %s/V.md 2>&1"):format(host, VDIR, ROOT))
    T.eq(rc, 0, 0, out)
    assert((read(ROOT .. "/V.md") or ""):find("| img | topk:0.25 |", 1, true), "V.md")
    out, rc = sh(("%s experiments/normalizers/full/init_sign.lua %s/torch %s/timm 2>&1"):format(host, ROOT, ROOT))
    T.eq(rc, 0, 0, out)
    assert(out:find("| img | topk:0.25 |", 1, true) and out:find("changes sign (no test under torch or timm: no variance)", 1, true)
      and not out:find("reverses", 1, true), out)
    out, rc = sh(("%s experiments/normalizers/full/init_sign.lua %s/torch %s/empty 2>&1"):format(host, ROOT, ROOT))
    assert(rc ~= 0, "empty folder must fail")
    local lines = select(2, out:gsub("\n", ""))
    T.eq(lines, 1, 0, out)
    assert(out:find("no finished records in", 1, true) and not out:find("traceback", 1, true), out)
    out, rc = sh(("%s experiments/normalizers/full/init_sign.lua %s/torch %s/timm --out /proc/no/such.md 2>&1"):format(host, ROOT, ROOT))
    assert(rc ~= 0 and select(2, out:gsub("\n", "")) == 1 and out:find("cannot write /proc/no/such.md", 1, true), out)
  end },
  { name = "(cleanup)", fn = function()
    assert(ROOT:match("^/tmp/attnlab%-test%-select%.%w+$"))
    sh("rm -rf " .. ROOT)
  end },
}
