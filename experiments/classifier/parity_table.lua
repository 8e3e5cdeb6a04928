-- experiments/classifier/parity_table.lua -- the tables of RESULTS.md's "Parity with
-- PyTorch" section from the records of experiments/classifier/parity_runs.sh.
--   bin/attnlab experiments/classifier/parity_table.lua [DIR]   (default experiments/classifier/parity)
-- Per dataset and implementation (attnlab --init torch, attnlab --init timm, the PyTorch
-- model with PyTorch's defaults): seeds, test accuracy mean ± sd (CIFAR-10 also on its
-- bit-exact first 1,000 test images), train loss per epoch mean ± sd, and the difference of
-- each to PyTorch's mean with a Welch 95% CI (unpaired: the initial weights differ).
local al = require "attnlab"
local util = require "attnlab.util"   -- shquote
local cli = al.cli
local stats = al.stats
local SPEC = {
  name = "parity_table.lua",
  usage = "bin/attnlab experiments/classifier/parity_table.lua [DIR]",
  about = "The tables of RESULTS.md's \"Parity with PyTorch\" from the records of parity_runs.sh.",
  positional = { { "DIR", "the records' folder (default experiments/classifier/parity)" } },
}
local _, rest = cli.parse(SPEC, arg or {})
local dir = rest[1] or (al.root() .. "/experiments/classifier/parity")

local IMPLS = { { "attnlab-torch", "attnlab, init torch" }, { "attnlab-timm", "attnlab, init timm" },
                { "torch", "PyTorch (its defaults)" } }
local IMPL_OF = {}
for _, im in ipairs(IMPLS) do IMPL_OF[im[1]] = true end
local groups, seen_ds = {}, {}
local nrecords = 0
for name in io.popen("ls " .. util.shquote(dir) .. "/*.json 2>/dev/null"):lines() do
  local ds, impl, seed = name:match("([%w_]+)__([%w%-]+)__seed(%d+)%.json$")
  if ds and IMPL_OF[impl] then   -- other names (a sweep's <dataset>__<normalizer>__seed<k>) are no parity runs
    -- al.sweep.read_record checks the record (lua/attnlab/report/record.lua): a truncated file, a
    -- loss that is not a number, an accuracy outside [0, 1], epochs that do not match the config
    -- are one line here, never a traceback or a mean of 108.90 %
    local r, why = al.sweep.read_record(name)
    if not r or r.error ~= nil then
      cli.die(SPEC, ("%s is not a training record (%s)"):format(name, why or ("an error record: " .. r.error)))
    end
    nrecords = nrecords + 1
    local key = ds .. "/" .. impl
    groups[key] = groups[key] or { seeds = {}, acc = {}, exact = {}, loss = {} }
    local g = groups[key]
    g.seeds[#g.seeds + 1] = tonumber(seed)
    g.acc[#g.acc + 1] = r.test_accuracy
    if r.test_accuracy_exact then g.exact[#g.exact + 1] = r.test_accuracy_exact end
    for e, ep in ipairs(r.epochs) do
      g.loss[e] = g.loss[e] or {}
      g.loss[e][#g.loss[e] + 1] = ep.loss
    end
    g.machine = g.machine or r.machine
    if not seen_ds[ds] then seen_ds[ds] = true; seen_ds[#seen_ds + 1] = ds end
  end
end
table.sort(seen_ds)
if nrecords == 0 then
  cli.die(SPEC, ("no records (<dataset>__<impl>__seed<k>.json, impl one of attnlab-torch, attnlab-timm, torch) in %s"):format(dir))
end

local function ms(x, scale, fmt)
  if #x == 0 then return "-" end
  fmt = fmt or "%.2f"
  if #x == 1 then return (fmt):format(scale * x[1]) end
  return (fmt .. " ± " .. fmt):format(scale * stats.mean(x), scale * stats.sd(x))
end

-- Welch's difference of means a - b with its 95% CI
local function welch(a, b, scale)
  if #a < 2 or #b < 2 then return "-" end
  local ma, mb, va, vb = stats.mean(a), stats.mean(b), stats.sd(a) ^ 2, stats.sd(b) ^ 2
  local se2 = va / #a + vb / #b
  local df = se2 ^ 2 / ((va / #a) ^ 2 / (#a - 1) + (vb / #b) ^ 2 / (#b - 1))
  local h = stats.t_ppf(0.975, df) * math.sqrt(se2)
  return ("%+.2f [%+.2f, %+.2f]"):format(scale * (ma - mb), scale * (ma - mb - h), scale * (ma - mb + h))
end

for _, ds in ipairs(seen_ds) do
  print(("### %s\n"):format(ds))
  local cifar = ds == "cifar10"
  local head = { "implementation", "seeds", "test acc %", "Δ vs PyTorch (95% CI)" }
  if cifar then head[#head + 1] = "exact 1k %" end
  local ref = groups[ds .. "/torch"]
  local nep = 0
  for _, im in ipairs(IMPLS) do local g = groups[ds .. "/" .. im[1]]; if g then nep = math.max(nep, #g.loss) end end
  for e = 1, nep do head[#head + 1] = ("loss ep %d"):format(e) end
  print("| " .. table.concat(head, " | ") .. " |")
  local sep = {}
  for i = 1, #head do sep[i] = i == 1 and "---" or "---:" end
  print("|" .. table.concat(sep, "|") .. "|")
  for _, im in ipairs(IMPLS) do
    local g = groups[ds .. "/" .. im[1]]
    if g then
      table.sort(g.seeds)
      local seeds = {}
      for i, s in ipairs(g.seeds) do seeds[i] = tostring(s) end
      local row = { im[2], table.concat(seeds, ","), ms(g.acc, 100),
                    (ref and im[1] ~= "torch") and welch(g.acc, ref.acc, 100) or "" }
      if cifar then row[#row + 1] = ms(g.exact, 100) end
      for e = 1, nep do row[#row + 1] = ms(g.loss[e] or {}, 1, "%.4f") end
      print("| " .. table.concat(row, " | ") .. " |")
    end
  end
  print()
end
local m
for _, g in pairs(groups) do if g.machine and g.machine.cpu then m = g.machine break end end
if m then print(("Machine: %s, %s cores, %s thread per run."):format(tostring(m.cpu), tostring(m.cores), tostring(m.threads))) end
