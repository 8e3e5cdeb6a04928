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
    -- the descriptive table gives every candidate's test Δ: topk:0.5's +40 pp is there, unchosen
    T.close(img.descriptive["topk:0.5"].mean_diff, 40, 1e-9)
    local md = sel.markdown(S)
    assert(md:find(("| img | topk:0.25 | topk:0.125 80.00, topk:0.25 81.00, topk:0.5 80.50 (3) | %+.2f ["):format(2 * H),
      1, true), md)
    assert(md:find("Descriptive only", 1, true), md)
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
  { name = "selection: fewer than 2 pairs is said, not tested", fn = function()
    local d = ROOT .. "/one"
    for _, n in ipairs({ "softmax", "topk:0.125", "topk:0.25", "topk:0.5" }) do rec(d, "img", n, 1, 0.5, 0.7) end
    local S = sel.select(al.report.load(d), { baseline = "softmax", candidates = CANDS })
    T.eq(S.datasets[1].test, nil)
    assert(S.datasets[1].why:find("fewer than 2 seeds", 1, true), S.datasets[1].why)
    assert(sel.markdown(S):find("fewer than 2 seeds", 1, true))
  end },
  { name = "robustness: Δ on matched seeds, the paired change, and each sign verdict", fn = function()
    local A, B = ROOT .. "/torch", ROOT .. "/timm"
    for s = 1, 4 do
      rec(A, "img", "softmax", s, 0.5)
      rec(A, "img", "entmax15", s, 0.5 + s / 64)       -- Δ_A = {1,2,3,4} h; on B's seeds {1,2,3} h
    end
    for s = 1, 3 do
      rec(A, "img", "topk:0.25", s, 0.5 + 1 / 64)      -- constant +h: CI [h, h]
      rec(A, "img", "sparsemax", s, 0.5 + 1 / 64)
      rec(B, "img", "softmax", s, 0.5)
      rec(B, "img", "entmax15", s, 0.5 - s / 64)       -- Δ_B = {-1,-2,-3} h: CI includes 0
      rec(B, "img", "topk:0.25", s, 0.5 - 1 / 64)      -- constant -h: a significant reversal
      rec(B, "img", "sparsemax", s, 0.5 + 2 / 64)      -- constant +2h: same sign, both significant
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
    T.eq(by["topk:0.25"].verdict, "reverses")
    T.eq(by.sparsemax.verdict, "keeps its sign (significant under both)")
    T.eq(rob.verdict({ mean_diff = 1, ci_low = -1, ci_high = 3 }, { mean_diff = 2, ci_low = 1, ci_high = 3 }, "a", "b"),
      "keeps its sign")
    T.eq(rob.verdict(nil, { mean_diff = 2, ci_low = 1, ci_high = 3 }, "a", "b"), "fewer than 2 paired seeds under a")
    T.eq(rob.verdict(nil, nil, "a", "b"), "fewer than 2 paired seeds under a and b")
    T.eq(rob.verdict({ mean_diff = 0, ci_low = -1, ci_high = 1 }, { mean_diff = 2, ci_low = 1, ci_high = 3 }, "a", "b"),
      "zero under a")
    local md = rob.markdown(R)
    assert(md:find(("| img | entmax15 | %+.2f ["):format(2.5 * H), 1, true), md)
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
    assert(out:find("| img | topk:0.25 |", 1, true) and out:find("reverses", 1, true), out)
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
