-- scripts/analyze.lua -- the Markdown report of a sweep's results folder: per dataset mean ±
-- sd accuracy per normalizer, paired t-tests vs the baseline over matched seeds with Holm's
-- correction within the experiment's families, Wilcoxon p, Cohen's d, support density,
-- hae vs entmax15, learned alphas, runtime ratios, error records; plus plots (gnuplot SVG +
-- PNG, or plain SVG without gnuplot). See lua/attnlab/report/init.lua.
--
--   bin/attnlab scripts/analyze.lua RESULTS_DIR [--out REPORT.md] [--plots DIR] [--no-plots]
--       [--svg] [--baseline NAME]
--
-- Prints the report and writes it to --out (default RESULTS_DIR/REPORT.md); plots go to
-- --plots (default: plots/ next to the report). Files that are no valid record (truncated,
-- wrong types, an accuracy outside [0, 1], epochs that do not match the config, an unknown
-- normalizer: lua/attnlab/report/record.lua) are named on stderr, one line each, and listed in
-- the report; nothing of them is counted. A folder without any finished record, or whose
-- experiment.json is malformed, is one line on stderr and exit status 1.
local al = require "attnlab"
local cli = al.cli

local SPEC = {
  name = "analyze.lua",
  usage = "bin/attnlab scripts/analyze.lua RESULTS_DIR [--out REPORT.md] [--plots DIR] [--no-plots] [--svg] [--baseline NAME]",
  about = "The Markdown report of a sweep's results folder: accuracy per normalizer, paired t-tests vs the\n" ..
          "baseline over matched seeds (Holm within families), support density, alphas, runtimes, plots.",
  positional = { { "RESULTS_DIR", "the folder a sweep wrote (records *.json, experiment.json)" } },
  positional_required = 1,
  options = {
    { "out", "FILE", "write the report here (default RESULTS_DIR/REPORT.md)" },
    { "plots", "DIR", "plots folder (default: plots/ next to the report)" },
    { "no-plots", nil, "no plots" },
    { "svg", nil, "plain SVG plots even when gnuplot is installed" },
    { "baseline", "NAME", "the normalizer the others are compared with (default: the experiment's)" },
  },
  examples = { "bin/attnlab scripts/analyze.lua results/normalizers-demo --no-plots" },
}

cli.run(SPEC, arg, function(o, rest)
  local dir = rest[1]:gsub("/+$", "")
  if dir == "" then dir = "/" end
  local f = io.open(dir .. "/.", "rb")
  if not f then cli.die(SPEC, ("no such folder: %s"):format(dir)) end
  f:close()
  local opts = { out = o.out, plots_dir = o.plots, baseline = o.baseline, tool = o.svg and "svg" or nil }
  if o.no_plots then opts.plots = false end
  local md, A, plots, out = al.report.run(dir, opts)
  print(md)
  -- one line per file that is no valid record (report/record.lua): the report lists it too,
  -- and counts nothing of it
  for _, u in ipairs(A.unreadable or {}) do
    io.stderr:write(("analyze.lua: invalid record %s: %s; not counted (listed in the report)\n"):format(u.path or u.name, u.why))
  end
  print(("report written to %s"):format(out))
  if plots then
    for _, p in ipairs(plots.files) do print("plot " .. p) end
  end
end)
