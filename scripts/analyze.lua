-- scripts/analyze.lua -- the Markdown report of a sweep's results folder: per dataset mean ±
-- sd accuracy per normalizer, paired t-tests vs the baseline over matched seeds with Holm's
-- correction within the experiment's families, Wilcoxon p, Cohen's d, support density,
-- hae vs entmax15, learned alphas, runtime ratios, error records; plus plots (gnuplot SVG +
-- PNG, or plain SVG without gnuplot). See lua/attnlab/report.lua.
--
--   bin/attnlab scripts/analyze.lua RESULTS_DIR [--out REPORT.md] [--plots DIR] [--no-plots]
--       [--svg] [--baseline NAME]
--
-- Prints the report and writes it to --out (default RESULTS_DIR/REPORT.md); plots go to
-- --plots (default: plots/ next to the report).
local al = require "attnlab"

local function usage(msg)
  io.stderr:write("analyze.lua: ", msg, "\n",
    "usage: bin/attnlab scripts/analyze.lua RESULTS_DIR [--out REPORT.md] [--plots DIR] [--no-plots] [--svg] [--baseline NAME]\n")
  os.exit(2)
end

local dir
local opts = {}
local i = 1
while i <= #arg do
  local a = arg[i]
  if a == "--out" or a == "--plots" or a == "--baseline" then
    local v = arg[i + 1]
    if not v then usage(a .. " needs a value") end
    if a == "--out" then opts.out = v elseif a == "--plots" then opts.plots_dir = v else opts.baseline = v end
    i = i + 2
  elseif a == "--no-plots" then
    opts.plots = false
    i = i + 1
  elseif a == "--svg" then
    opts.tool = "svg"
    i = i + 1
  elseif a:sub(1, 2) == "--" then
    usage("unknown option " .. a)
  elseif not dir then
    dir = a:gsub("/+$", "")
    i = i + 1
  else
    usage("unexpected argument '" .. a .. "'")
  end
end
if not dir then usage("no RESULTS_DIR given") end

local ok, md, _, plots, out = pcall(al.report.run, dir, opts)
if not ok then
  io.stderr:write("analyze.lua: ", tostring(md), "\n")
  os.exit(1)
end
print(md)
print(("report written to %s"):format(out))
if plots then
  for _, f in ipairs(plots.files) do print("plot " .. f) end
end
