-- experiments/normalizers/full/val_topk.lua -- the confirmatory test of validation-selected top-k
-- (issue 18, item 4) from the records of experiments/normalizers/full_val_topk.lua.
--   bin/attnlab experiments/normalizers/full/val_topk.lua experiments/normalizers/full/records/val_topk [--out FILE]
-- Per dataset: the top-k ratio with the highest mean validation accuracy after the last epoch
-- (over the seeds that finished) is chosen without looking at the test set; then its test
-- accuracy is compared with softmax's over the matched seeds by one paired t-test, unadjusted
-- (one pre-registered comparison per dataset). Prints (or writes) a Markdown table.
local al = require "attnlab"
local cli = al.cli
local SPEC = {
  name = "val_topk.lua",
  usage = "bin/attnlab experiments/normalizers/full/val_topk.lua RECORDS_DIR [--out FILE]",
  about = "Choose the top-k ratio on validation accuracy, then test that one ratio against softmax.",
  options = { { "out", "FILE", "write the Markdown table there (atomically) instead of printing it" } },
  positional = { { "RECORDS_DIR", "the folder the sweep of full_val_topk.lua wrote" } },
  examples = { "bin/attnlab experiments/normalizers/full/val_topk.lua experiments/normalizers/full/records/val_topk" },
}

local function last_val(rec)
  local eps = rec.epochs or {}
  local e = eps[#eps]
  return e and type(e.val_accuracy) == "number" and e.val_accuracy or nil
end

cli.run(SPEC, arg, function(opts, rest)
  local dir = rest[1] or cli.die(SPEC, "RECORDS_DIR is required", 2)
  local data = al.report.load(dir)
  if #data.runs == 0 then error(("no finished records in %s"):format(dir), 0) end
  local by = {}   -- by[dataset][normalizer][seed] = record
  for _, r in ipairs(data.runs) do
    by[r.label] = by[r.label] or {}
    by[r.label][r.normalizer] = by[r.label][r.normalizer] or {}
    by[r.label][r.normalizer][r.seed] = r.record
  end
  local out = { "| dataset | ratio chosen | mean val acc % per ratio (seeds) | test Δ vs softmax (pp) [95% CI] | pairs | t | p |",
                "|---|---|---|---|---:|---:|---:|" }
  local labels = {}
  for d in pairs(by) do labels[#labels + 1] = d end
  table.sort(labels)
  for _, d in ipairs(labels) do
    local best, best_v, cells = nil, -1, {}
    for _, n in ipairs({ "topk:0.125", "topk:0.25", "topk:0.5" }) do
      local vs = {}
      for _, rec in pairs(by[d][n] or {}) do vs[#vs + 1] = last_val(rec) end
      if #vs > 0 then
        local m = al.stats.mean(vs)
        cells[#cells + 1] = ("%s %.2f (%d)"):format(n, 100 * m, #vs)
        if m > best_v then best, best_v = n, m end
      end
    end
    local row = { d, best or "-", table.concat(cells, ", ") }
    local a, b = {}, {}
    if best and by[d].softmax then
      for seed, rec in pairs(by[d][best]) do
        local s = by[d].softmax[seed]
        if s then a[#a + 1], b[#b + 1] = 100 * rec.test_accuracy, 100 * s.test_accuracy end
      end
    end
    if #a >= 2 then
      local t = al.stats.ttest_rel(a, b)
      for _, v in ipairs({ ("%+.2f [%+.2f, %+.2f]"):format(t.mean_diff, t.ci_low, t.ci_high), tostring(t.n),
                           ("%.3f"):format(t.t), ("%.4f"):format(t.p) }) do row[#row + 1] = v end
    else
      for _, v in ipairs({ ("fewer than 2 matched seeds (%d)"):format(#a), tostring(#a), "", "" }) do row[#row + 1] = v end
    end
    out[#out + 1] = "| " .. table.concat(row, " | ") .. " |"
  end
  local md = table.concat(out, "\n") .. "\n"
  if opts.out then
    local ok, err = al.write_atomic(opts.out, md)
    if not ok then error("cannot write " .. opts.out .. ": " .. err, 0) end
  else
    io.write(md)
  end
end)
