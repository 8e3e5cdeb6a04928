-- attnlab.report -- the study's report from a folder of sweep records: per dataset, accuracy
-- per normalizer (mean +- sd over seeds), paired tests against the baseline over matched
-- seeds with Holm's correction inside the families the experiment defines, Wilcoxon and
-- Cohen's d as robustness checks, support density, learned alphas, runtime ratios, error
-- records; and plots (accuracy vs support density per dataset, runtime bars) drawn with
-- gnuplot as SVG + PNG, or written as SVG directly when gnuplot is absent.
--
--   local data = al.report.load("results/demo")          -- records + DIR/experiment.json
--   local A = al.report.analyze(data)                     -- numbers (tested)
--   local md = al.report.markdown(A, { plots = al.report.plots(A, "results/demo/plots") })
--   al.report.run("results/demo", { out = "results/demo/REPORT.md" })   -- all of it
--
-- Statistics (attnlab.stats): the paired two-sided t-test is scipy.stats.ttest_rel on
-- accuracy(normalizer) - accuracy(baseline) over the seeds present for both. Holm adjusts
-- the raw p-values of every comparison a family declares together (statsmodels 'holm').
-- A comparison with fewer than 2 matched seeds, a non-finite accuracy, or differences that
-- are all equal (zero variance, where ttest_rel gives SciPy's t = +-inf, p = 0, or NaN for
-- identical samples) has no test (report/paired.lua): its t, p, CI, d and Wilcoxon cells
-- say "n/a (<reason>)", a line under the table says why, it is never marked significant,
-- and it enters its Holm family as p = 1 so that the family keeps its declared size m.
--
-- Records: every file is checked by report/record.lua (the check the sweep applies too). One
-- that is not a valid record (truncated, wrong types, an accuracy outside [0, 1], epochs that
-- do not match config.epochs, an unknown normalizer) is listed under "Runs without a result"
-- with its reason and counted nowhere; a malformed DIR/experiment.json, or a folder without
-- any finished record, is refused in one line. Table scripts (selection, robustness) refuse an
-- invalid record outright: report.check_loaded. A record that is valid but not the run its name
-- stands for in DIR/experiment.json (another normalizer, seed or dataset, another config) is
-- listed the same way: run_mismatch.
local al = require "attnlab"
local util = require "attnlab.util"
local MD = require "attnlab.report.markdown"
local PLOTS = require "attnlab.report.plots"
local PAIRED = require "attnlab.report.paired"
local RECORD = require "attnlab.report.record"

local report = {}

local NAN = -(0.0 / 0.0)

-- ---- helpers ------------------------------------------------------------------------------------
local read_all, q = util.read_file, util.shquote
local sorted_keys, median = util.sorted_keys, util.median

local function mean(xs)
  if #xs == 0 then return nil end
  return al.stats.mean(xs)
end

-- Measurements (density, timings, per-epoch accuracy, alphas) enter a mean or median only when
-- finite (al.json.decode refuses 1e999, but a record table given as a table may hold inf):
-- stats.mean({inf, -inf}) is NaN (IEEE), which the report would print as the density or runtime
-- of a normalizer.
local finite = PAIRED.finite

-- ---- loading ----------------------------------------------------------------------------------------
-- The dataset label of a record: what the sweep's experiment.json says, else the record
-- name's first part, else the config's dataset (+ "_masked" for masked padding).
local function label_of(name, rec, exp)
  local r = exp and exp.runs and exp.runs[name]
  if r and r.dataset then return r.dataset end
  if rec.run and rec.run.dataset then return rec.run.dataset end
  local l = name:match("^(.-)__.-__seed%d+$")
  if l then return l end
  local c = rec.config or {}
  return (c.dataset or "?") .. (c.padding == "masked" and "_masked" or "")
end

-- experiment.json is written by the sweep but may be edited by hand or left half-written: each
-- field the report reads has its type checked, and a wrong one is one line naming the file and
-- the field (a name of 5 would head the report, a baseline of 7 compare against nothing). The
-- entries of families are checked where they are used (families_of).
local function experiment_problem(e)
  local function list_of(v, ok)
    if not RECORD.is_list(v) then return false end
    for _, x in ipairs(v) do if not ok(x) then return false end end
    return true
  end
  local function str(x) return type(x) == "string" and x ~= "" end
  local checks = {
    { "name", str, "a non-empty string" }, { "description", function(v) return type(v) == "string" end, "a string" },
    { "file", function(v) return type(v) == "string" end, "a string" }, { "baseline", str, "a normalizer name" },
    { "quick", function(v) return type(v) == "boolean" end, "true or false" },
    { "normalizers", function(v) return list_of(v, str) end, "a list of normalizer names" },
    { "seeds", function(v) return list_of(v, function(x) return math.type(x) == "integer" end) end, "a list of integers" },
    { "datasets", function(v) return list_of(v, function(x)
        return str(x) or (RECORD.is_object(x) and str(x.name) and (x.study == nil or type(x.study) == "boolean")
          and (x.overrides == nil or RECORD.is_object(x.overrides)))
      end) end, "a list of dataset labels or { name =, study =, overrides = } objects" },
    { "families", RECORD.is_list, "a list of family objects" },
    { "schedule", RECORD.is_object, "an object" }, { "overrides", RECORD.is_object, "an object" },
    { "runs", function(v)
        if not RECORD.is_object(v) then return false end
        for k, r in pairs(v) do
          if type(k) ~= "string" or not RECORD.is_object(r) or (r.dataset ~= nil and not str(r.dataset)) then return false end
        end
        return true
      end, "an object mapping record names to { dataset =, normalizer =, seed = }" },
  }
  for _, c in ipairs(checks) do
    local v = e[c[1]]
    if v ~= nil and not c[2](v) then return ("%s must be %s, got %s"):format(c[1], c[3], RECORD.shown(v)) end
  end
end

-- DIR/experiment.json decoded and checked, or nil when there is none; anything unusable raises.
local function load_experiment(dir)
  local path = dir .. "/experiment.json"
  local kind = util.not_regular(path)   -- (io.open on a FIFO would wait forever)
  if kind then error(("report: %s is %s, not a regular file"):format(path, kind), 0) end
  local f, err = io.open(path, "rb")
  if not f then
    if tostring(err):match("No such file or directory$") then return nil end
    error(("report: %s cannot be opened (%s)"):format(path, tostring(err):match(": ([^:]*)$") or tostring(err)), 0)
  end
  local s = f:read("a")
  f:close()
  if not s then error(("report: %s cannot be read (a folder?)"):format(path), 0) end
  local e, why = util.decode_json(s)
  if e == nil then error(("report: %s is not JSON (%s)"):format(path, why), 0) end
  if not RECORD.is_object(e) or next(e) == nil then
    error(("report: %s holds %s, want the object a sweep writes"):format(path, RECORD.shown(e)), 0)
  end
  why = experiment_problem(e)
  if why then error(("report: %s: %s"):format(path, why), 0) end
  return e
end

-- Why a valid finished record in a sweep's folder (one with experiment.json) is not the run its
-- file name stands for, or nil. The report groups runs by the normalizer and seed inside the
-- record: a record copied in from another sweep, or edited, would otherwise be counted as
-- another normalizer's run or another seed (and paired as such), or mix another schedule into
-- a mean. So the name must be the sweep's record name of the record's own dataset label,
-- normalizer and seed, and its config the experiment's (schedule, the dataset's own settings,
-- overrides: the check the sweep makes before it counts a record as done). Folders written
-- before experiment.json kept the datasets' own settings (an entry without `overrides`) get
-- the first check only: their runs' configs are not known.
-- Without experiment.json only what the name itself says is checked: a <dataset>__<normalizer>__seed<k>
-- name must be the record's own normalizer and seed, and a <dataset> that is a dataset of the library
-- the record's config.dataset (a kmnist__... file holding a fashion_mnist run is not a kmnist run).
-- With it, the record must also be one of the runs its `runs` lists (when it lists any) and of one
-- of its datasets: a stray record of another experiment would otherwise get a section of its own,
-- or join a Holm family and change every p of it.
local function same_dataset(a, b)
  if a == b then return true end
  local by = al.data.by_name
  return type(a) == "string" and type(b) == "string" and by[a] ~= nil and by[a] == by[b]
end
-- a file name's dataset part (label, "_masked" aside) that names a dataset other than config's
local function name_dataset_mismatch(label, c)
  local base = label:gsub("_masked$", "")
  if al.data.by_name[base] and not same_dataset(base, c.dataset) and c.dataset ~= label then
    return ("config.dataset is %s, not the %s its file name stands for"):format(RECORD.shown(c.dataset), base)
  end
  return nil
end
local function run_mismatch(name, rec, exp)
  local c = rec.config
  if not exp then
    -- (names outside a sweep may carry another word in the normalizer's place, as the classifier's
    -- parity records do, "cifar10__attnlab-timm__seed1": only a normalizer's own name is compared)
    local label, mid, seed = name:match("^(.-)__(.-)__seed(%d+)$")
    if not label then return nil end
    local mid_is_normalizer = pcall(al.nn.Normalizer.parse, mid)
    if math.tointeger(tonumber(seed)) ~= c.seed or (mid_is_normalizer and al.sweep.sanitize(c.normalizer) ~= mid) then
      return ("its config (normalizer %s, seed %s) is the run %s, not the one its file name stands for"):format(
        RECORD.shown(c.normalizer), RECORD.shown(c.seed), al.sweep.record_name(label, c.normalizer, c.seed))
    end
    return name_dataset_mismatch(label, c)
  end
  local runs = RECORD.is_object(exp.runs) and next(exp.runs) ~= nil and exp.runs or nil
  local listed = runs and runs[name] or nil
  local label = listed and listed.dataset or name:match("^(.-)__.-__seed%d+$")
  if not label then
    return "its name is not <dataset>__<normalizer>__seed<k>, and experiment.json's runs do not list it"
  end
  if runs and not listed then
    return "not a run of this experiment: experiment.json's runs do not list " .. name
  end
  local want_name = al.sweep.record_name(label, c.normalizer, c.seed)
  if want_name ~= name then
    return ("its config (normalizer %s, seed %s) is the run %s, not the one its file name stands for"):format(
      RECORD.shown(c.normalizer), RECORD.shown(c.seed), want_name)
  end
  local entry
  for _, d in ipairs(exp.datasets or {}) do
    if type(d) == "table" and d.name == label then entry = d
    elseif d == label then entry = { name = d } end
  end
  if not entry then
    if type(exp.datasets) == "table" and #exp.datasets > 0 then
      return ("not a run of this experiment: its dataset %s is none of experiment.json's datasets"):format(label)
    end
    return name_dataset_mismatch(label, c)
  end
  local want_ds = entry.dataset
  if want_ds == nil and al.data.by_name[label] then want_ds = label end   -- (a plain label names its dataset)
  if want_ds ~= nil and not same_dataset(want_ds, c.dataset) then
    return ("config.dataset is %s, but experiment.json's %s runs on %s"):format(RECORD.shown(c.dataset), label,
      RECORD.shown(want_ds))
  end
  local label_overrides = (exp.overrides or {})[label]
  if entry.overrides == nil or (label_overrides ~= nil and not RECORD.is_object(label_overrides)) then return nil end
  local want = util.merge(util.merge(exp.schedule, entry.overrides), label_overrides)
  want.dataset, want.normalizer, want.seed = entry.dataset or label, c.normalizer, c.seed
  local change = RECORD.config_change(rec, want)
  if change then return "made with another config than experiment.json's (" .. change .. ")" end
end

-- Read every record of a results folder. Returns { dir, experiment (or nil), runs = {...},
-- errors = {...}, unreadable = {...}, duplicates = {...} }; a run is
-- { name, label, dataset, normalizer, seed, acc, acc_exact, density, density_real, train_s,
--   infer_s, alphas, record }. Every file goes through report/record.lua's check: one that is
-- not a valid record (truncated, wrong types, an accuracy outside [0, 1], epochs that do not
-- match config.epochs, an unknown normalizer ...) lands in `unreadable` with the reason, never
-- in runs or errors: the report lists it as invalid and counts nothing of it.
function report.load(dir)
  local data = { dir = dir, runs = {}, errors = {}, unreadable = {}, duplicates = {} }
  data.experiment = load_experiment(dir)
  -- records and symbolic links to them (followed, as the sweep follows them when it counts a run
  -- as finished; a link to nothing is listed as invalid, not skipped)
  local p = io.popen("find " .. q(dir) .. " -maxdepth 1 -name '*.json' \\( -type f -o -type l \\) 2>/dev/null | sort")
  local files = {}
  for f in p:lines() do files[#files + 1] = f end
  p:close()
  local seen = {}
  for _, path in ipairs(files) do
    local name = path:match("([^/]+)%.json$")
    if name ~= "experiment" and not path:find("%.json%.tmp%.") then
      local rec, why, kind = RECORD.read(path)
      if kind == "missing" then why = "a symbolic link to nothing (its target does not exist)" end
      if rec and rec.error == nil then why = run_mismatch(name, rec, data.experiment) end
      if not rec or why then
        data.unreadable[#data.unreadable + 1] = { name = name, path = path, why = why }
      elseif rec.error ~= nil then
        local c = rec.config or {}
        data.errors[#data.errors + 1] = { name = name, path = path, label = label_of(name, rec, data.experiment),
          normalizer = c.normalizer, seed = c.seed, error = rec.error, attempts = rec.attempts,
          exit_status = rec.exit_status, stderr_tail = rec.stderr_tail, record = rec }
      else
        local c = rec.config
        local r = { name = name, path = path, label = label_of(name, rec, data.experiment), dataset = c.dataset,
                    normalizer = c.normalizer, seed = c.seed, acc = rec.test_accuracy,
                    acc_exact = rec.test_accuracy_exact, density = rec.support_density,
                    density_real = rec.support_density_real, train_s = rec.train_s_per_step,
                    infer_s = rec.infer_s_per_example, alphas = rec.alphas, record = rec }
        local key = ("%s\0%s\0%s"):format(r.label, tostring(r.normalizer), tostring(r.seed))
        if seen[key] then
          data.duplicates[#data.duplicates + 1] = { name = name, other = seen[key] }
        else
          seen[key] = name
          data.runs[#data.runs + 1] = r
        end
      end
    end
  end
  return data
end

-- "a.json (why); b.json (why) and 3 more": the first few entries of a list for a one-line message.
local function some(list, fmt, n)
  n = n or 3
  local parts = {}
  for i = 1, math.min(n, #list) do parts[i] = fmt(list[i]) end
  return table.concat(parts, "; ") .. (#list > n and (" and %d more"):format(#list - n) or "")
end

-- The one line for a loaded folder without any finished record: what is there instead (error
-- records, invalid files), or a hint when there is nothing at all. Its report would be empty
-- tables under "Git revisions: . Machine: .", and a table script's empty rows.
local function no_finished_records(data)
  local what = {}
  if #data.errors > 0 then
    what[#what + 1] = ("%d error record%s: %s"):format(#data.errors, #data.errors == 1 and "" or "s",
      some(data.errors, function(e) return e.name .. " (" .. e.error:gsub("\n", " ") .. ")" end))
  end
  if #data.unreadable > 0 then
    what[#what + 1] = ("%d invalid: %s"):format(#data.unreadable,
      some(data.unreadable, function(u) return u.name .. ".json (" .. u.why .. ")" end))
  end
  return ("no finished records in %s%s"):format(data.dir, #what > 0 and ("; " .. table.concat(what, "; "))
    or " (is it the folder a sweep wrote?)")
end

-- A loaded folder (report.load) as a table script may use it: raises one line when nothing in
-- it is a finished record ("no finished records in DIR", saying what is there instead) or when
-- a file is not a valid record (its path and why: a table has no place to list it, and a run
-- left out silently would change the seeds the tests pair). Returns the lines a script prints
-- on stderr about what it leaves out visibly: error records (failed runs) and duplicates.
function report.check_loaded(data)
  if #data.unreadable > 0 then
    local u = data.unreadable[1]
    error(("%s: %s%s"):format(u.path or u.name, u.why, #data.unreadable > 1
      and (" (and %d more invalid record%s: %s)"):format(#data.unreadable - 1, #data.unreadable == 2 and "" or "s",
        some({ table.unpack(data.unreadable, 2) }, function(x) return x.name .. ".json" end)) or ""), 0)
  end
  if #data.runs == 0 then error(no_finished_records(data), 0) end
  local notes = {}
  for _, e in ipairs(data.errors) do
    notes[#notes + 1] = ("failed run %s (error record: %s); not in the table"):format(e.path or e.name, (e.error:gsub("\n", " ")))
  end
  for _, d in ipairs(data.duplicates) do
    notes[#notes + 1] = ("%s duplicates %s (same dataset, normalizer, seed); ignored"):format(d.name, d.other)
  end
  return notes
end

-- ---- analysis --------------------------------------------------------------------------------------
local function ordered(preferred, present)
  local out, used = {}, {}
  for _, v in ipairs(preferred or {}) do
    if present[v] and not used[v] then out[#out + 1] = v; used[v] = true end
  end
  local rest = {}
  for v in pairs(present) do if not used[v] then rest[#rest + 1] = v end end
  table.sort(rest)
  for _, v in ipairs(rest) do out[#out + 1] = v end
  return out
end

local function group_stats(runs)
  table.sort(runs, function(a, b) return a.seed < b.seed end)
  local g = { runs = runs, by_seed = {}, seeds = {}, n = #runs }
  local acc, ex, dens, densr, tr, inf = {}, {}, {}, {}, {}, {}
  for _, r in ipairs(runs) do
    g.by_seed[r.seed] = r
    g.seeds[#g.seeds + 1] = r.seed
    acc[#acc + 1] = r.acc
    if finite(r.acc_exact) then ex[#ex + 1] = r.acc_exact end
    if finite(r.density) then dens[#dens + 1] = r.density end
    if finite(r.density_real) then densr[#densr + 1] = r.density_real end
    if finite(r.train_s) then tr[#tr + 1] = r.train_s end
    if finite(r.infer_s) then inf[#inf + 1] = r.infer_s end
  end
  g.acc = al.stats.summary(acc)
  if #ex > 0 then g.acc_exact = al.stats.summary(ex) end
  g.density, g.density_real = mean(dens), mean(densr)
  g.train_s, g.infer_s = median(tr), median(inf)
  return g
end

-- The seeds both groups have, and the accuracies of x (a) and of base (b) on them, in seed order.
local function match_seeds(c, gx, gb)
  local a, b = {}, {}
  for _, s in ipairs(gx.seeds) do
    if gb.by_seed[s] then
      c.seeds[#c.seeds + 1] = s
      a[#a + 1] = gx.by_seed[s].acc
      b[#b + 1] = gb.by_seed[s].acc
    else
      c.only_x[#c.only_x + 1] = s
    end
  end
  for _, s in ipairs(gb.seeds) do if not gx.by_seed[s] then c.only_base[#c.only_base + 1] = s end end
  c.n_pairs = #c.seeds
  c.a, c.b = a, b
  return a, b
end

-- The t-test and its companions of a testable comparison (PAIRED.why found nothing wrong:
-- >= 2 finite pairs with a nonzero spread, so t, p, the CI and d are finite).
local function run_tests(c, a, b)
  local t = al.stats.ttest_rel(a, b)
  c.t, c.p, c.df, c.mean_diff, c.ci_low, c.ci_high = t.t, t.p, t.df, t.mean_diff, t.ci_low, t.ci_high
  c.cohen_d = al.stats.cohen_d_paired(a, b)
  local ok, w = pcall(al.stats.wilcoxon, a, b)
  if ok then
    c.wilcoxon_p, c.wilcoxon_method = w.p, w.method
  else
    c.wilcoxon_p, c.wilcoxon_note = NAN, tostring(w):gsub("^attnlab%.stats%.wilcoxon: ", "")
  end
end

-- One paired comparison of normalizer x against base on dataset label. A comparison without
-- a test (c.na = the reason: no records, no or 1 pair, non-finite, no variance, identical
-- samples; see report/paired.lua) keeps only its descriptive Δ (c.mean_diff, when defined) and
-- has no t, p, CI, d or Wilcoxon p: ttest_rel's +-inf / NaN for a zero spread, and wilcoxon's
-- p = 1 for one pair (its exact null of n = 1), are conventions, not results to record.
local function compare(groups, label, x, base)
  local gx, gb = groups[label] and groups[label][x], groups[label] and groups[label][base]
  local c = { dataset = label, normalizer = x, baseline = base, n_pairs = 0, seeds = {},
              only_x = {}, only_base = {} }
  if not gx or not gb then
    c.na = not gx and ("no records of " .. x) or ("no records of " .. base)
    return c
  end
  local a, b = match_seeds(c, gx, gb)
  c.na, c.mean_diff = PAIRED.why(a, b)
  if not c.na then run_tests(c, a, b) end
  return c
end

-- Families: the experiment's, else every other normalizer vs the baseline over the study
-- datasets, plus hae vs entmax15 when both ran.
local function families_of(exp, A)
  local study = {}
  for _, d in ipairs(A.datasets) do study[#study + 1] = d end
  if exp and type(exp.datasets) == "table" then
    study = {}
    local known = {}
    for _, e in ipairs(exp.datasets) do
      if type(e) == "table" and e.study ~= false then study[#study + 1] = e.name; known[e.name] = true
      elseif type(e) == "table" then known[e.name] = true end
    end
    for _, d in ipairs(A.datasets) do if not known[d] then study[#study + 1] = d end end
  end
  local fams = exp and exp.families
  if type(fams) ~= "table" or #fams == 0 then
    fams = { { name = "vs_" .. A.baseline, title = "every normalizer vs " .. A.baseline } }
    local has = {}
    for _, n in ipairs(A.normalizers) do has[n] = true end
    if has.hae and has.entmax15 and A.baseline ~= "entmax15" then
      fams[2] = { name = "hae_vs_entmax15", title = "hae vs entmax15", baseline = "entmax15", normalizers = { "hae" } }
    end
  end
  -- experiment.json is hand-written: a malformed family is one line naming the file and the
  -- field, not an index error in the middle of the analysis
  local function bad(i, field, want, v)
    error(("report: %s/experiment.json: families[%d]%s must be %s, got %s"):format(A.dir, i, field, want,
      type(v) == "table" and "a table" or al.json.encode(v)), 0)
  end
  local function names_ok(v)
    if type(v) ~= "table" then return false end
    for k, x in pairs(v) do if math.type(k) ~= "integer" or type(x) ~= "string" then return false end end
    return true
  end
  for i, f in ipairs(fams) do
    if type(f) ~= "table" then bad(i, "", "an object", f) end
    if f.baseline ~= nil and type(f.baseline) ~= "string" then bad(i, ".baseline", "a normalizer name", f.baseline) end
    if f.normalizers ~= nil and f.normalizers ~= "all" and not names_ok(f.normalizers) then
      bad(i, ".normalizers", 'a list of normalizer names or "all"', f.normalizers)
    end
    if f.datasets ~= nil and f.datasets ~= "study" and not names_ok(f.datasets) then
      bad(i, ".datasets", 'a list of dataset labels or "study"', f.datasets)
    end
  end
  local out = {}
  for _, f in ipairs(fams) do
    local base = f.baseline or A.baseline
    local norms = f.normalizers
    if norms == nil or norms == "all" then
      norms = {}
      for _, n in ipairs(A.normalizers) do if n ~= base then norms[#norms + 1] = n end end
    end
    local dsets = f.datasets
    if dsets == nil or dsets == "study" then dsets = study end
    out[#out + 1] = { name = f.name, title = f.title or f.name, baseline = base, normalizers = norms,
                      datasets = dsets, comparisons = {} }
  end
  return out
end

-- Holm over every comparison the family declares (each dataset x normalizer it names, records
-- or not), so m is the declared family size. A comparison without a test (c.na: no records,
-- fewer than 2 pairs, no variance, identical samples, non-finite) enters as p = 1: it is never
-- rejected, and a failed or degenerate cell does not shrink m and so loosen the correction
-- of the others. It gets no Holm p of its own (printed n/a), only reject = false.
local function holm_family(f)
  local ps = {}
  f.m, f.untested = #f.comparisons, {}
  for i, c in ipairs(f.comparisons) do
    ps[i] = c.na and 1.0 or c.p
    if c.na then f.untested[#f.untested + 1] = c end
  end
  if #ps == 0 then return end
  local adj, rej = al.stats.holm(ps)
  for i, c in ipairs(f.comparisons) do
    if c.na then c.reject = false else c.holm, c.reject = adj[i], rej[i] end
  end
end

-- Learning curves from the records' per-epoch test accuracy: A.curves[label] = { epochs = E,
-- [normalizer] = { mean = {..}, sd = {..}, n = {..} } in % per epoch (over the seeds that reached
-- it), delta = { [normalizer] = { mean, lo, hi, n } }: the paired difference to the baseline per
-- epoch in percentage points with its 95% t interval, over the seeds both have at that epoch }.
function report.curves(A)
  local out = {}
  for _, d in ipairs(A.datasets) do
    local c, E = { delta = {} }, 0
    local per = {}   -- per[n][seed][epoch] = accuracy
    for _, n in ipairs(A.normalizers) do
      local g = A.groups[d][n]
      if g then
        per[n] = {}
        for _, r in ipairs(g.runs) do
          local row = {}
          for _, e in ipairs(type(r.record.epochs) == "table" and r.record.epochs or {}) do
            if type(e) == "table" and math.type(e.epoch) == "integer" and e.epoch >= 1 and finite(e.test_accuracy) then
              row[e.epoch] = e.test_accuracy
              if e.epoch > E then E = e.epoch end
            end
          end
          per[n][r.seed] = row
        end
      end
    end
    c.epochs = E
    -- The last epoch is the accuracy table's row, so a curve computes as that table does: the
    -- seeds in order, mean and sd of the fractions (al.stats.summary), Δ, CI and test from
    -- ttest_rel on the fractions, then x 100. Summing 100 * accuracy in pairs() order gave
    -- another last bit, and a tie such as 66.945 printed as 66.95 here and 66.94 there.
    for _, n in ipairs(A.normalizers) do
      local seeds = per[n]
      if seeds then
        local order = {}   -- seeds in numeric order (sorted_keys sorts as strings: 1, 10, 2)
        for seed in pairs(seeds) do order[#order + 1] = seed end
        table.sort(order)
        local cn = { mean = {}, sd = {}, n = {} }
        for ep = 1, E do
          local xs = {}
          for _, seed in ipairs(order) do
            local a = seeds[seed][ep]
            if a then xs[#xs + 1] = a end
          end
          cn.n[ep], cn.mean[ep], cn.sd[ep] = #xs, NAN, NAN
          if #xs > 0 then
            local s = al.stats.summary(xs)   -- sd NaN below 2 values
            cn.mean[ep], cn.sd[ep] = 100 * s.mean, 100 * s.sd
          end
        end
        c[n] = cn
        local b = per[A.baseline]
        if b and n ~= A.baseline then
          local dl = { mean = {}, lo = {}, hi = {}, n = {}, na = {} }
          for ep = 1, E do
            local xa, xb = {}, {}
            for _, seed in ipairs(order) do
              local row = seeds[seed]
              if row[ep] and b[seed] and b[seed][ep] then
                xa[#xa + 1], xb[#xb + 1] = row[ep], b[seed][ep]
              end
            end
            dl.n[ep], dl.mean[ep], dl.lo[ep], dl.hi[ep] = #xa, NAN, NAN, NAN
            -- no interval where there is no test (one pair, a zero spread: [m, m] is no CI)
            local t, why, m = PAIRED.ttest(xa, xb)
            dl.na[ep] = #xa > 0 and why or nil
            if t then
              dl.mean[ep], dl.lo[ep], dl.hi[ep] = 100 * t.mean_diff, 100 * t.ci_low, 100 * t.ci_high
            elseif m then
              dl.mean[ep] = 100 * m
            end
          end
          c.delta[n] = dl
        end
      end
    end
    if E > 0 then out[d] = c end
  end
  return out
end

-- Everything the report shows, as numbers. opts.baseline overrides the experiment's.
function report.analyze(data, opts)
  opts = opts or {}
  local exp = data.experiment
  local A = { dir = data.dir, experiment = exp, errors = data.errors, unreadable = data.unreadable,
              duplicates = data.duplicates, baseline = opts.baseline or (exp and exp.baseline) or "softmax",
              n_records = #data.runs }
  local present_d, present_n, buckets = {}, {}, {}
  for _, r in ipairs(data.runs) do
    present_d[r.label], present_n[r.normalizer] = true, true
    buckets[r.label] = buckets[r.label] or {}
    local b = buckets[r.label][r.normalizer] or {}
    b[#b + 1] = r
    buckets[r.label][r.normalizer] = b
  end
  local pref_d = {}
  if exp and type(exp.datasets) == "table" then
    for _, e in ipairs(exp.datasets) do pref_d[#pref_d + 1] = type(e) == "table" and e.name or e end
  end
  -- a baseline asked for by name must have records: otherwise every comparison would be
  -- "no records of foo" under a report that looks complete
  if opts.baseline ~= nil and not present_n[opts.baseline] then
    local have = sorted_keys(present_n)
    error(("report: baseline '%s' has no records in %s (normalizers there: %s)"):format(tostring(opts.baseline),
      tostring(data.dir), #have > 0 and table.concat(have, ", ") or "none"), 0)
  end
  A.datasets = ordered(pref_d, present_d)
  A.normalizers = ordered(exp and exp.normalizers or { "softmax", "sparsemax", "entmax15", "hae" }, present_n)
  A.groups = {}
  for label, byn in pairs(buckets) do
    A.groups[label] = {}
    for n, runs in pairs(byn) do A.groups[label][n] = group_stats(runs) end
  end

  -- families and Holm inside each
  A.families = families_of(exp, A)
  for _, f in ipairs(A.families) do
    for _, d in ipairs(f.datasets) do
      for _, n in ipairs(f.normalizers) do
        if n ~= f.baseline then
          local c = compare(A.groups, d, n, f.baseline)
          c.family = f.name
          f.comparisons[#f.comparisons + 1] = c
        end
      end
    end
    holm_family(f)
  end

  -- per dataset: each normalizer vs the baseline, taken from the first family that holds
  -- the comparison (so it carries that family's Holm p), else computed without correction
  A.vs_baseline = {}
  for _, d in ipairs(A.datasets) do
    A.vs_baseline[d] = {}
    for _, n in ipairs(A.normalizers) do
      if n ~= A.baseline and A.groups[d][n] then
        local found
        for _, f in ipairs(A.families) do
          if f.baseline == A.baseline then
            for _, c in ipairs(f.comparisons) do
              if c.dataset == d and c.normalizer == n then found = c break end
            end
          end
          if found then break end
        end
        A.vs_baseline[d][n] = found or compare(A.groups, d, n, A.baseline)
      end
    end
  end

  A.curves = report.curves(A)

  -- learned alphas: per dataset, normalizer, layer: over heads and seeds
  A.alphas = {}
  for _, d in ipairs(A.datasets) do
    for _, n in ipairs(A.normalizers) do
      local g = A.groups[d][n]
      if g then
        local layers = {}
        for _, r in ipairs(g.runs) do
          if type(r.alphas) == "table" then
            for li, heads in ipairs(r.alphas) do
              layers[li] = layers[li] or { values = {}, per_head = {}, seeds = 0 }
              local L = layers[li]
              L.seeds = L.seeds + 1
              for h, a in ipairs(type(heads) == "table" and heads or {}) do
                L.per_head[h] = L.per_head[h] or {}
                if finite(a) then
                  L.values[#L.values + 1] = a
                  table.insert(L.per_head[h], a)
                end
              end
            end
          end
        end
        for li, L in ipairs(layers) do
          if #L.values > 0 then
            local s = al.stats.summary(L.values)
            local ph = {}
            for h, v in ipairs(L.per_head) do ph[h] = mean(v) or NAN end   -- NaN: no finite value of head h
            A.alphas[#A.alphas + 1] = { dataset = d, normalizer = n, layer = li, seeds = L.seeds, mean = s.mean,
                                        min = s.min, max = s.max, per_head = ph }
          end
        end
      end
    end
  end

  -- runtime: medians over seeds, relative to the baseline's median on the same dataset
  A.runtime = {}
  for _, d in ipairs(A.datasets) do
    A.runtime[d] = {}
    local gb = A.groups[d][A.baseline]
    for _, n in ipairs(A.normalizers) do
      local g = A.groups[d][n]
      if g then
        local rt = { train_s = g.train_s, infer_s = g.infer_s }
        if gb and gb.train_s and g.train_s then rt.train_rel = g.train_s / gb.train_s end
        if gb and gb.infer_s and g.infer_s then rt.infer_rel = g.infer_s / gb.infer_s end
        A.runtime[d][n] = rt
      end
    end
  end

  -- expected runs without any record
  A.missing = {}
  if exp and type(exp.runs) == "table" then
    local have = {}
    for _, r in ipairs(data.runs) do have[r.name] = true end
    for _, e in ipairs(data.errors) do have[e.name] = true end
    for _, u in ipairs(data.unreadable) do have[u.name] = true end   -- listed as unreadable, not as missing
    for _, name in ipairs(sorted_keys(exp.runs)) do
      if not have[name] then A.missing[#A.missing + 1] = name end
    end
  end
  return A
end

-- ---- Markdown and plots (report/markdown.lua, report/plots.lua) ------------------------------------
report.fmt_p, report.stars, report.md_table, report.markdown = MD.fmt_p, MD.stars, MD.md_table, MD.markdown
report.plots = PLOTS.plots
-- Validation-selected confirmatory tests and cross-condition sign checks (report/selection.lua,
-- report/robustness.lua), on the same loaded records.
report.selection = require "attnlab.report.selection"
report.robustness = require "attnlab.report.robustness"
local write_file = PLOTS.write_file

-- Load, analyze, plot and write the report. opts: out (Markdown path; default
-- DIR/REPORT.md), plots_dir (default: <folder of out>/plots), plots = false to skip them,
-- tool, baseline. Returns the Markdown, the analysis and the plots. A folder without any
-- finished record raises one line (no report is written).
function report.run(dir, opts)
  opts = opts or {}
  local data = report.load(dir)
  if #data.runs == 0 then error("report: " .. no_finished_records(data), 0) end
  local A = report.analyze(data, opts)
  local out = opts.out or (dir .. "/REPORT.md")
  local report_dir = out:match("^(.*)/[^/]*$") or "."
  local plots
  if opts.plots ~= false then
    plots = report.plots(A, opts.plots_dir or (report_dir .. "/plots"), { tool = opts.tool })
  end
  local md = report.markdown(A, { plots = plots, report_dir = report_dir })
  write_file(out, md .. "\n")
  return md, A, plots, out
end

return report
