-- experiments/classifier/summarize.lua -- the table of experiments/classifier/RESULTS.md
-- from the records in experiments/classifier/records/*.json (copied from results/).
--   bin/attnlab experiments/classifier/summarize.lua
local al = require "attnlab"
local util = require "attnlab.util"
local cli = al.cli
local SPEC = {
  name = "summarize.lua",
  usage = "bin/attnlab experiments/classifier/summarize.lua",
  about = "The table of experiments/classifier/RESULTS.md from experiments/classifier/records/*.json.",
}
cli.parse(SPEC, arg or {})
local dir = al.root() .. "/experiments/classifier/records"
local rows = {}
for name in io.popen("ls " .. util.shquote(dir) .. "/*.json 2>/dev/null"):lines() do
  local r, why = al.sweep.read_record(name)
  if not r or r.error ~= nil or type(r.config) ~= "table" or type(r.support) ~= "table" then
    cli.die(SPEC, ("%s is not a training record (%s)"):format(name, why or (r.error and "an error record" or "no config or support")))
  end
  local c = r.config
  local alphas = ""
  if r.alphas then
    local lo, hi = math.huge, -math.huge
    for _, layer in ipairs(r.alphas) do for _, a in ipairs(layer) do lo, hi = math.min(lo, a), math.max(hi, a) end end
    alphas = ("%.3f-%.3f"):format(lo, hi)
  end
  local per_layer = {}
  for i, s in ipairs(r.support) do per_layer[i] = ("%.3f"):format(s.mean_all) end
  rows[#rows + 1] = { c.dataset .. (c.padding == "masked" and " (masked)" or ""), c.normalizer, tostring(c.epochs),
    ("%.4f"):format(r.test_accuracy), r.test_accuracy_exact and ("%.4f"):format(r.test_accuracy_exact) or "-",
    ("%.3f"):format(r.support_density), ("%.3f"):format(r.support_density_real), table.concat(per_layer, " / "), alphas,
    ("%.1f"):format(r.train_s_per_step * 1e3), ("%.3f"):format(r.infer_s_per_example * 1e3), tostring(r.tokens),
    tostring(r.params), r.dataset.protocol or "" }
end
if #rows == 0 then cli.die(SPEC, "no records in " .. dir) end
table.sort(rows, function(a, b) return a[1] == b[1] and a[2] > b[2] or a[1] < b[1] end)
al.bench.print_table({ "dataset", "normalizer", "epochs", "test acc", "CIFAR exact 1k", "support", "support (real keys)",
  "support per layer", "hae alphas", "ms/step", "ms/example infer", "tokens", "params", "protocol" }, rows)
