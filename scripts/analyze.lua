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

-- The folder a path's file is in, absolute and with symbolic links resolved where they exist
-- (readlink -m), so that --out ./x/../R/a.json and a link into R are seen to be R's files.
local function real_path(path)
  local p = io.popen("readlink -m " .. require("attnlab.util").shquote(path) .. " 2>/dev/null")
  local r = p and p:read("l")
  if p then p:close() end
  return (r and r ~= "") and r or require("attnlab.util").abspath(path)
end

cli.run(SPEC, arg, function(o, rest)
  -- an empty path would be read as / (the whole file system's root folder)
  if rest[1] == "" then cli.die(SPEC, "RESULTS_DIR is an empty path; give the folder a sweep wrote", 2) end
  local dir = rest[1]:gsub("/+$", "")
  if dir == "" then dir = "/" end
  local f = io.open(dir .. "/.", "rb")
  if not f then
    -- (a regular file was "no such folder" too)
    cli.die(SPEC, os.rename(dir, dir) and ("%s is not a folder (give the folder a sweep wrote)"):format(dir)
      or ("no such folder: %s"):format(dir))
  end
  f:close()
  -- the report is Markdown: written over a record or experiment.json of the folder (or as a new
  -- .json there, which the next report would read as an invalid record), it destroys the results
  if o.out == "" then cli.die(SPEC, "--out needs a file path, got ''", 2) end
  -- (an empty --plots was found only after the report was written: "cannot create the plots folder ")
  if o.plots == "" then cli.die(SPEC, "--plots needs a folder path, got ''", 2) end
  if o.out then
    local out_real, dir_real = real_path(o.out), real_path(dir)
    local parent = out_real:match("^(.*)/[^/]*$")
    if parent == "" then parent = "/" end
    if parent == dir_real and out_real:match("%.json$") then
      local exists = os.rename(o.out, o.out) ~= nil
      cli.die(SPEC, ("--out %s is %s of the analyzed folder %s; the Markdown report would %s; write it to a " ..
        ".md file (default %s/REPORT.md)"):format(o.out, out_real:match("/experiment%.json$") and "the experiment.json"
        or exists and "a record (.json)" or "a .json file", dir, exists and "overwrite it" or "be read as a record next time",
        dir == "/" and "" or dir), 2)
    end
  end
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
