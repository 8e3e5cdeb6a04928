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
-- the raw p-values of every comparison of a family together (statsmodels 'holm'). When all
-- differences are equal, t = +-inf and p = 0 (nonzero difference) or t = p = NaN (identical
-- samples), as SciPy; a NaN p enters Holm as p = 1 (nothing to reject) so that the family
-- keeps its size. Fewer than 2 matched seeds: no test, said so in the table.
local al = require "attnlab"

local report = {}

local NAN = -(0.0 / 0.0)

-- ---- helpers ------------------------------------------------------------------------------------
local function read_all(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

local function q(s) return al.sweep.shquote(s) end

local function sorted_keys(t)
  local k = {}
  for x in pairs(t) do k[#k + 1] = x end
  table.sort(k, function(a, b) return tostring(a) < tostring(b) end)
  return k
end

local function median(xs)
  if #xs == 0 then return nil end
  local s = {}
  for i, v in ipairs(xs) do s[i] = v end
  table.sort(s)
  local n = #s
  return n % 2 == 1 and s[(n + 1) // 2] or 0.5 * (s[n // 2] + s[n // 2 + 1])
end

local function mean(xs)
  if #xs == 0 then return nil end
  return al.stats.mean(xs)
end

local function isnum(v) return type(v) == "number" and v == v end

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

-- Read every record of a results folder. Returns { dir, experiment (or nil), runs = {...},
-- errors = {...}, unreadable = {...}, duplicates = {...} }; a run is
-- { name, label, dataset, normalizer, seed, acc, acc_exact, density, density_real, train_s,
--   infer_s, alphas, record }.
function report.load(dir)
  local data = { dir = dir, runs = {}, errors = {}, unreadable = {}, duplicates = {} }
  local s = read_all(dir .. "/experiment.json")
  if s then
    local ok, e = pcall(al.json.decode, s)
    if ok and type(e) == "table" then data.experiment = e end
  end
  local p = io.popen("find " .. q(dir) .. " -maxdepth 1 -type f -name '*.json' 2>/dev/null | sort")
  local files = {}
  for f in p:lines() do files[#files + 1] = f end
  p:close()
  local seen = {}
  for _, path in ipairs(files) do
    local name = path:match("([^/]+)%.json$")
    if name ~= "experiment" and not path:find("%.json%.tmp%.") then
      local txt = read_all(path)
      local ok, rec = pcall(al.json.decode, txt or "")
      if not txt then
        data.unreadable[#data.unreadable + 1] = { name = name, path = path, why = "cannot be opened (permissions?)" }
      elseif not ok or type(rec) ~= "table" then
        local why = #txt == 0 and "empty file" or ("not JSON: " .. tostring(rec):gsub("^[^%s:]+%.lua:%d+: ", ""))
        data.unreadable[#data.unreadable + 1] = { name = name, path = path, why = why }
      elseif rec.error ~= nil then
        local c = rec.config or {}
        data.errors[#data.errors + 1] = { name = name, label = label_of(name, rec, data.experiment),
          normalizer = c.normalizer, seed = c.seed, error = tostring(rec.error), attempts = rec.attempts,
          exit_status = rec.exit_status, stderr_tail = rec.stderr_tail, record = rec }
      elseif type(rec.test_accuracy) ~= "number" or type(rec.config) ~= "table" then
        data.unreadable[#data.unreadable + 1] = { name = name, path = path, why = "no test_accuracy or config" }
      else
        local c = rec.config
        local r = { name = name, label = label_of(name, rec, data.experiment), dataset = c.dataset,
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
    if isnum(r.acc_exact) then ex[#ex + 1] = r.acc_exact end
    if isnum(r.density) then dens[#dens + 1] = r.density end
    if isnum(r.density_real) then densr[#densr + 1] = r.density_real end
    if isnum(r.train_s) then tr[#tr + 1] = r.train_s end
    if isnum(r.infer_s) then inf[#inf + 1] = r.infer_s end
  end
  g.acc = al.stats.summary(acc)
  if #ex > 0 then g.acc_exact = al.stats.summary(ex) end
  g.density, g.density_real = mean(dens), mean(densr)
  g.train_s, g.infer_s = median(tr), median(inf)
  return g
end

-- One paired comparison of normalizer x against base on dataset label.
local function compare(groups, label, x, base)
  local gx, gb = groups[label] and groups[label][x], groups[label] and groups[label][base]
  local c = { dataset = label, normalizer = x, baseline = base, n_pairs = 0, seeds = {},
              only_x = {}, only_base = {} }
  if not gx or not gb then
    c.note = not gx and ("no records of " .. x) or ("no records of " .. base)
    return c
  end
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
  if c.n_pairs < 2 then
    c.note = ("%d matched seed%s: no test"):format(c.n_pairs, c.n_pairs == 1 and "" or "s")
    if c.n_pairs == 1 then c.mean_diff = a[1] - b[1] end
    return c
  end
  local t = al.stats.ttest_rel(a, b)
  c.t, c.p, c.df, c.mean_diff, c.ci_low, c.ci_high = t.t, t.p, t.df, t.mean_diff, t.ci_low, t.ci_high
  c.cohen_d = al.stats.cohen_d_paired(a, b)
  local ok, w = pcall(al.stats.wilcoxon, a, b)
  if ok then
    c.wilcoxon_p, c.wilcoxon_method = w.p, w.method
  else
    c.wilcoxon_p, c.wilcoxon_note = NAN, tostring(w):gsub("^attnlab%.stats%.wilcoxon: ", "")
  end
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
            if type(e) == "table" and math.type(e.epoch) == "integer" and e.epoch >= 1 and isnum(e.test_accuracy) then
              row[e.epoch] = e.test_accuracy
              if e.epoch > E then E = e.epoch end
            end
          end
          per[n][r.seed] = row
        end
      end
    end
    c.epochs = E
    local function spread(xs)   -- mean, sd (NaN below 2 values)
      if #xs == 0 then return NAN, NAN end
      local m, v = mean(xs), 0
      if #xs < 2 then return m, NAN end
      for _, x in ipairs(xs) do v = v + (x - m) ^ 2 end
      return m, math.sqrt(v / (#xs - 1))
    end
    for _, n in ipairs(A.normalizers) do
      local seeds = per[n]
      if seeds then
        local cn = { mean = {}, sd = {}, n = {} }
        for ep = 1, E do
          local xs = {}
          for _, row in pairs(seeds) do if row[ep] then xs[#xs + 1] = 100 * row[ep] end end
          cn.n[ep] = #xs
          cn.mean[ep], cn.sd[ep] = spread(xs)
        end
        c[n] = cn
        local b = per[A.baseline]
        if b and n ~= A.baseline then
          local dl = { mean = {}, lo = {}, hi = {}, n = {} }
          for ep = 1, E do
            local diffs = {}
            for seed, row in pairs(seeds) do
              if row[ep] and b[seed] and b[seed][ep] then diffs[#diffs + 1] = 100 * (row[ep] - b[seed][ep]) end
            end
            local m, sd = spread(diffs)
            dl.n[ep], dl.mean[ep], dl.lo[ep], dl.hi[ep] = #diffs, m, NAN, NAN
            if #diffs >= 2 then
              local half = al.stats.t_ppf(0.975, #diffs - 1) * sd / math.sqrt(#diffs)
              dl.lo[ep], dl.hi[ep] = m - half, m + half
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
    local tested, ps = {}, {}
    for _, d in ipairs(f.datasets) do
      if A.groups[d] then
        for _, n in ipairs(f.normalizers) do
          if n ~= f.baseline and A.groups[d][n] then
            local c = compare(A.groups, d, n, f.baseline)
            c.family = f.name
            f.comparisons[#f.comparisons + 1] = c
            if c.p ~= nil then
              tested[#tested + 1] = c
              ps[#ps + 1] = (c.p == c.p) and c.p or 1.0
            end
          end
        end
      end
    end
    f.m = #tested
    if #tested > 0 then
      local adj, rej = al.stats.holm(ps)
      for i, c in ipairs(tested) do c.holm, c.reject = adj[i], rej[i] end
    end
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
              for h, a in ipairs(heads) do
                L.values[#L.values + 1] = a
                L.per_head[h] = L.per_head[h] or {}
                table.insert(L.per_head[h], a)
              end
            end
          end
        end
        for li, L in ipairs(layers) do
          if #L.values > 0 then
            local s = al.stats.summary(L.values)
            local ph = {}
            for h, v in ipairs(L.per_head) do ph[h] = mean(v) end
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

-- ---- formatting --------------------------------------------------------------------------------------
local function fnum(v, fmt)
  if v == nil then return "" end
  if v ~= v then return "nan" end
  if v == math.huge then return "+inf" elseif v == -math.huge then return "-inf" end
  return (fmt or "%.3f"):format(v)
end

function report.fmt_p(p)
  if p == nil then return "" end
  if p ~= p then return "nan" end
  if p == 0 then return "0" end
  if p < 1e-4 then return ("%.1e"):format(p) end
  return ("%.4f"):format(p)
end
local fmt_p = report.fmt_p

function report.stars(p)
  if p == nil or p ~= p then return "" end
  if p < 0.001 then return "***" elseif p < 0.01 then return "**" elseif p < 0.05 then return "*" end
  return "ns"
end

local function pct(v) return v and ("%.2f"):format(100 * v) or "" end

local function md_table(header, rows, align)
  local out = { "| " .. table.concat(header, " | ") .. " |" }
  local sep = {}
  for i = 1, #header do sep[i] = (align and align[i] == "l") and ":---" or "---:" end
  out[#out + 1] = "| " .. table.concat(sep, " | ") .. " |"
  for _, r in ipairs(rows) do
    local cells = {}
    for i = 1, #header do cells[i] = tostring(r[i] == nil and "" or r[i]):gsub("|", "\\|") end
    out[#out + 1] = "| " .. table.concat(cells, " | ") .. " |"
  end
  return table.concat(out, "\n")
end
report.md_table = md_table

local function seeds_str(list)
  local s = {}
  for i, v in ipairs(list) do s[i] = tostring(v) end
  return table.concat(s, ",")
end

local function delta_cell(c)
  if c.mean_diff == nil then return "" end
  local s = ("%+.2f"):format(100 * c.mean_diff)
  if c.ci_low and c.ci_low == c.ci_low then
    s = s .. (" [%+.2f, %+.2f]"):format(100 * c.ci_low, 100 * c.ci_high)
  end
  return s
end

local function pairs_cell(c)
  local s = tostring(c.n_pairs)
  local extra = {}
  if #c.only_x > 0 then extra[#extra + 1] = "unpaired " .. c.normalizer .. ": " .. seeds_str(c.only_x) end
  if #c.only_base > 0 then extra[#extra + 1] = "unpaired " .. c.baseline .. ": " .. seeds_str(c.only_base) end
  if #extra > 0 then s = s .. " (" .. table.concat(extra, "; ") .. ")" end
  return s
end

local function test_cells(c)
  if c.p == nil then return { c.note or "", "", "", "", "", "" } end
  local w = fmt_p(c.wilcoxon_p)
  if c.wilcoxon_note then
    w = c.wilcoxon_note:find("differences are zero", 1, true) and "n/a (all d = 0)" or ("n/a (" .. c.wilcoxon_note .. ")")
  end
  return { fnum(c.t), fmt_p(c.p), c.holm and fmt_p(c.holm) or "(none)",
           c.holm and report.stars(c.holm) or (report.stars(c.p) .. " (raw)"), w, fnum(c.cohen_d, "%.2f") }
end

local function schedule_line(A, d)
  local g
  for _, n in ipairs(A.normalizers) do if A.groups[d][n] then g = A.groups[d][n] break end end
  if not g then return "" end
  local rec = g.runs[1].record
  local c = rec.config
  local parts = { ("dataset `%s`"):format(tostring(c.dataset)) }
  if c.padding and c.padding ~= "positions" then parts[#parts + 1] = "padding " .. c.padding end
  parts[#parts + 1] = ("%s epoch%s, batch %s, lr %s, init %s%s"):format(tostring(c.epochs), c.epochs == 1 and "" or "s",
    tostring(c.batch_size), tostring(c.lr), c.init and tostring(c.init) or "timm (recorded before the init key)",
    c.decay_all and ", weight decay on all parameters" or "")
  if rec.dataset and rec.dataset.train then
    parts[#parts + 1] = ("%d training / %d test examples"):format(rec.dataset.train, rec.dataset.test or 0)
  end
  parts[#parts + 1] = ("model dim %s, depth %s, heads %s, %s tokens, %s parameters"):format(tostring(c.dim),
    tostring(c.depth), tostring(c.heads), tostring(rec.tokens or "?"), tostring(rec.params or "?"))
  return table.concat(parts, "; ")
end

local function rel(path, base_dir)
  if base_dir and path:sub(1, #base_dir + 1) == base_dir .. "/" then return path:sub(#base_dir + 2) end
  return path
end

-- The Markdown report. opts.plots: the result of report.plots; opts.report_dir: folder the
-- Markdown file lives in (plot links are made relative to it).
function report.markdown(A, opts)
  opts = opts or {}
  local out = {}
  local function w(s) out[#out + 1] = s or "" end
  local exp = A.experiment
  local base = A.baseline
  w(("# %s: attention normalizers compared"):format(exp and exp.name or "Sweep"))
  w()
  local revs, hosts = {}, {}
  for _, d in ipairs(A.datasets) do
    for _, n in ipairs(A.normalizers) do
      local g = A.groups[d][n]
      if g then for _, r in ipairs(g.runs) do
        revs[tostring(r.record.git_revision)] = true
        local m = r.record.machine or {}
        hosts[("%s (%s, %s thread%s)"):format(tostring(m.cpu or m.host), tostring(m.blas), tostring(m.threads),
          m.threads == 1 and "" or "s")] = true
      end end
    end
  end
  w(("Results folder `%s`: %d finished record%s, %d error record%s%s%s. Git revision%s: %s. Machine: %s.")
    :format(A.dir or "?", A.n_records, A.n_records == 1 and "" or "s", #A.errors, #A.errors == 1 and "" or "s",
      (#A.unreadable > 0 and (", %d unreadable record%s"):format(#A.unreadable, #A.unreadable == 1 and "" or "s") or "") ..
      (#A.missing > 0 and (", %d expected run%s without a record"):format(#A.missing, #A.missing == 1 and "" or "s") or ""),
      (exp and exp.quick) and " (--quick preset)" or "", #sorted_keys(revs) == 1 and "" or "s",
      table.concat(sorted_keys(revs), ", "), table.concat(sorted_keys(hosts), "; ")))
  w()
  w(("How to read: accuracy is test accuracy in %%, mean ± sd over seeds. Δ is the mean paired difference " ..
     "to %s in percentage points with its 95%% CI, over the seeds both have (\"pairs\"). t and p: paired two-sided " ..
     "t-test; Holm p: adjusted within the comparison's family (see Families); sig: *** < 0.001, ** < 0.01, " ..
     "* < 0.05 on the Holm p, ns otherwise. Wilcoxon p: signed-rank test (exact when n ≤ 25 without ties). " ..
     "d: Cohen's d of the paired differences. Density: share of keys with nonzero attention weight, mean over " ..
     "layers, heads and queries (1 = dense)."):format(base))
  w()

  local plots = opts.plots or {}
  for _, d in ipairs(A.datasets) do
    w(("## %s"):format(d))
    w()
    w(schedule_line(A, d) .. ".")
    w()
    local rows = {}
    local has_exact = false
    for _, n in ipairs(A.normalizers) do
      local g = A.groups[d][n]
      if g and g.acc_exact then has_exact = true end
    end
    for _, n in ipairs(A.normalizers) do
      local g = A.groups[d][n]
      if g then
        local acc = g.n >= 2 and ("%.2f ± %.2f"):format(100 * g.acc.mean, 100 * g.acc.sd) or pct(g.acc.mean)
        local row = { n, tostring(g.n), acc }
        if has_exact then row[#row + 1] = g.acc_exact and pct(g.acc_exact.mean) or "" end
        if n == base then
          for _ = 1, 8 do row[#row + 1] = "" end
          row[#row - 7] = "(baseline)"
        else
          local c = A.vs_baseline[d][n]
          row[#row + 1] = delta_cell(c)
          row[#row + 1] = pairs_cell(c)
          for _, v in ipairs(test_cells(c)) do row[#row + 1] = v end
        end
        row[#row + 1] = fnum(g.density, "%.3f")
        rows[#rows + 1] = row
      end
    end
    local header = { "normalizer", "seeds", "accuracy %" }
    if has_exact then header[#header + 1] = "exact-1k %" end
    for _, h in ipairs({ "Δ vs " .. base .. " (pp) [95% CI]", "pairs", "t", "p", "Holm p", "sig", "Wilcoxon p",
                         "d", "density" }) do header[#header + 1] = h end
    local align = { "l" }
    w(md_table(header, rows, align))
    w()
    if has_exact then
      w("exact-1k: accuracy on the first 1,000 test records, the bit-exact part of this copy's CIFAR-10 test set.")
      w()
    end
    local pl = plots.by_dataset and plots.by_dataset[d]
    if pl then
      w(("![%s: accuracy vs support density](%s)"):format(d, rel(pl.png or pl.svg, opts.report_dir)))
      w()
    end
    local cv = A.curves and A.curves[d]
    if cv and cv.epochs > 1 and cv[base] then
      w(("Learning curve: test accuracy after each epoch, %s as mean ± sd over seeds, the others as their " ..
         "paired Δ to it in pp [95%% CI] (seeds that have both at that epoch)."):format(base))
      w()
      local hdr, crow = { "epoch", base .. " %" }, {}
      local others = {}
      for _, n in ipairs(A.normalizers) do if n ~= base and cv.delta[n] then others[#others + 1] = n; hdr[#hdr + 1] = "Δ " .. n end end
      for ep = 1, cv.epochs do
        local b = cv[base]
        local row = { tostring(ep), b.n[ep] > 0 and (b.n[ep] >= 2 and ("%.2f ± %.2f"):format(b.mean[ep], b.sd[ep])
          or ("%.2f"):format(b.mean[ep])) or "" }
        for _, n in ipairs(others) do
          local dl = cv.delta[n]
          local cell = ""
          if dl.n[ep] >= 2 then cell = ("%+.2f [%+.2f, %+.2f]"):format(dl.mean[ep], dl.lo[ep], dl.hi[ep])
          elseif dl.n[ep] == 1 then cell = ("%+.2f (1 pair)"):format(dl.mean[ep]) end
          row[#row + 1] = cell
        end
        crow[#crow + 1] = row
      end
      w(md_table(hdr, crow, { "r" }))
      w()
      local cp = plots.curves and plots.curves[d]
      if cp then
        w(("![%s: learning curves](%s)"):format(d, rel(cp.png or cp.svg, opts.report_dir)))
        w()
      end
    end
  end

  -- families whose baseline is not the main one (hae vs entmax15 ...)
  for _, f in ipairs(A.families) do
    if f.baseline ~= base and #f.comparisons > 0 then
      w(("## %s"):format(f.title))
      w()
      w(("Family `%s`: %d test%s, Holm within it."):format(f.name, f.m, f.m == 1 and "" or "s"))
      w()
      local rows = {}
      for _, c in ipairs(f.comparisons) do
        local row = { c.dataset, c.normalizer .. " vs " .. c.baseline, delta_cell(c), pairs_cell(c) }
        for _, v in ipairs(test_cells(c)) do row[#row + 1] = v end
        rows[#rows + 1] = row
      end
      w(md_table({ "dataset", "comparison", "Δ (pp) [95% CI]", "pairs", "t", "p", "Holm p", "sig", "Wilcoxon p", "d" },
        rows, { "l", "l" }))
      w()
    end
  end

  if #A.alphas > 0 then
    w("## Learned alphas")
    w()
    w("alpha per head = 1.05 + 0.9·sigmoid(a), 1.5 at initialisation; mean and range over heads and seeds, and the mean of each head over seeds.")
    w()
    local rows = {}
    for _, a in ipairs(A.alphas) do
      local ph = {}
      for h, v in ipairs(a.per_head) do ph[h] = ("%.3f"):format(v) end
      rows[#rows + 1] = { a.dataset, a.normalizer, tostring(a.layer), tostring(a.seeds), ("%.3f"):format(a.mean),
                          ("%.3f – %.3f"):format(a.min, a.max), table.concat(ph, " ") }
    end
    w(md_table({ "dataset", "normalizer", "layer", "seeds", "mean α", "range", "per head" }, rows, { "l", "l" }))
    w()
  end

  w(("## Runtime relative to %s"):format(base))
  w()
  w(("Median over seeds of the training step time and of the inference time per example, divided by %s's " ..
     "median on the same dataset (below 1 = faster). Runs that shared the machine make these noisy.")
    :format(base))
  w()
  do
    local header, rows = { "normalizer" }, {}
    for _, d in ipairs(A.datasets) do header[#header + 1] = d .. ": train" header[#header + 1] = d .. ": infer" end
    local brow = { base .. " (absolute)" }
    for _, d in ipairs(A.datasets) do
      local rt = A.runtime[d][base]
      brow[#brow + 1] = rt and rt.train_s and ("%.1f ms/step"):format(1e3 * rt.train_s) or ""
      brow[#brow + 1] = rt and rt.infer_s and ("%.3f ms/ex"):format(1e3 * rt.infer_s) or ""
    end
    rows[1] = brow
    for _, n in ipairs(A.normalizers) do
      if n ~= base then
        local row = { n }
        for _, d in ipairs(A.datasets) do
          local rt = A.runtime[d][n]
          row[#row + 1] = rt and rt.train_rel and ("%.2f×"):format(rt.train_rel) or ""
          row[#row + 1] = rt and rt.infer_rel and ("%.2f×"):format(rt.infer_rel) or ""
        end
        rows[#rows + 1] = row
      end
    end
    w(md_table(header, rows, { "l" }))
    w()
    if plots.runtime then
      w(("![runtime relative to %s](%s)"):format(base, rel(plots.runtime.png or plots.runtime.svg, opts.report_dir)))
      w()
    end
  end

  w("## Families")
  w()
  for _, f in ipairs(A.families) do
    local untested = #f.comparisons - f.m
    w(("- `%s` (%s): %d comparison%s vs %s, Holm over the %d with a test%s.")
      :format(f.name, f.title, #f.comparisons, #f.comparisons == 1 and "" or "s", f.baseline, f.m,
        untested > 0 and (" (%d without one: fewer than 2 matched seeds)"):format(untested) or ""))
  end
  w()

  if #A.errors > 0 or #A.unreadable > 0 or #A.missing > 0 or #A.duplicates > 0 then
    w("## Runs without a result")
    w()
    if #A.errors > 0 then
      local rows = {}
      for _, e in ipairs(A.errors) do
        rows[#rows + 1] = { e.name, tostring(e.attempts or 1), tostring(e.exit_status or ""), (e.error:gsub("\n", " ")) }
      end
      w(("%d error record%s (a rerun of the sweep retries them; the stderr tail is in each record):"):format(#A.errors,
        #A.errors == 1 and "" or "s"))
      w()
      w(md_table({ "run", "attempts", "exit", "error" }, rows, { "l", "l", "l", "l" }))
      w()
    end
    if #A.missing > 0 then
      w(("%d expected run%s without any record: %s"):format(#A.missing, #A.missing == 1 and "" or "s",
        table.concat(A.missing, ", ")))
      w()
    end
    for _, u in ipairs(A.unreadable) do w(("- unreadable record %s: %s"):format(u.name, u.why)) end
    for _, d in ipairs(A.duplicates) do w(("- %s duplicates %s (same dataset, normalizer, seed); ignored"):format(d.name, d.other)) end
    if #A.unreadable + #A.duplicates > 0 then w() end
  end

  if plots.files and #plots.files > 0 then
    w("## Plots")
    w()
    for _, f in ipairs(plots.files) do w("- " .. rel(f, opts.report_dir)) end
    if plots.tool then w() w("Drawn with " .. plots.tool .. ".") end
    w()
  end
  return table.concat(out, "\n")
end

-- ---- plots --------------------------------------------------------------------------------------------
local PALETTE = { "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf",
                  "#7f7f7f", "#bcbd22" }
-- The study's normalizers keep their colour (and point type) from one report to the next;
-- others take the remaining palette entries in order.
local FIXED = { softmax = 1, sparsemax = 2, entmax15 = 3, hae = 4, ["topk:0.125"] = 5, ["topk:0.25"] = 6, ["topk:0.5"] = 7 }

local function style_index(A, n)
  if FIXED[n] then return FIXED[n] end
  local k = 7
  for _, m in ipairs(A.normalizers) do
    if not FIXED[m] then
      k = k + 1
      if m == n then break end
    end
  end
  return k
end

local function color_of(A, n) return PALETTE[(style_index(A, n) - 1) % #PALETTE + 1] end

local function have_gnuplot()
  return os.execute("command -v gnuplot >/dev/null 2>&1") == true
end

local function gp_str(s) return "'" .. tostring(s):gsub("'", "''") .. "'" end

-- Axis ticks: about n "nice" values covering [lo, hi].
local function nice_ticks(lo, hi, n)
  if not (hi > lo) then lo, hi = lo - 0.5, hi + 0.5 end
  local raw = (hi - lo) / (n or 5)
  local mag = 10 ^ math.floor(math.log(raw, 10))
  local step = mag
  for _, m in ipairs({ 1, 2, 2.5, 5, 10 }) do
    if m * mag >= raw then step = m * mag break end
  end
  local t0 = math.floor(lo / step) * step
  local ticks = {}
  local v = t0
  while v <= hi + step * 1e-9 do ticks[#ticks + 1] = v; v = v + step end
  if ticks[#ticks] < hi then ticks[#ticks + 1] = v end
  return ticks, step
end

local function xml(s) return (tostring(s):gsub("&", "&amp;"):gsub("<", "&lt;"):gsub(">", "&gt;")) end

-- A minimal SVG canvas with a plot area, axes, ticks and a legend on the right.
local function svg_frame(W, H, title, xlabel, ylabel, xr, yr, xticks, yticks, xtick_labels)
  local L, R, T, B = 70, 170, 40, 60
  local pw, ph = W - L - R, H - T - B
  local function X(v) return L + (v - xr[1]) / (xr[2] - xr[1]) * pw end
  local function Y(v) return T + ph - (v - yr[1]) / (yr[2] - yr[1]) * ph end
  local s = { ('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">')
    :format(W, H, W, H), ('<rect width="%d" height="%d" fill="white"/>'):format(W, H),
    ('<text x="%d" y="22" text-anchor="middle" font-size="14">%s</text>'):format(L + pw // 2, xml(title)) }
  for _, v in ipairs(yticks) do
    s[#s + 1] = ('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>'):format(L, Y(v), L + pw, Y(v))
    s[#s + 1] = ('<text x="%d" y="%.1f" text-anchor="end">%s</text>'):format(L - 6, Y(v) + 4, ("%g"):format(v))
  end
  for i, v in ipairs(xticks) do
    if not xtick_labels then
      s[#s + 1] = ('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>'):format(X(v), T, X(v), T + ph)
    end
    s[#s + 1] = ('<text x="%.1f" y="%d" text-anchor="middle">%s</text>'):format(X(v), T + ph + 18,
      xml(xtick_labels and xtick_labels[i] or ("%g"):format(v)))
  end
  s[#s + 1] = ('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="black"/>'):format(L, T, pw, ph)
  s[#s + 1] = ('<text x="%d" y="%d" text-anchor="middle">%s</text>'):format(L + pw // 2, H - 15, xml(xlabel))
  s[#s + 1] = ('<g transform="translate(18,%d) rotate(270)"><text x="0" y="0" text-anchor="middle">%s</text></g>'):format(T + ph // 2,
    xml(ylabel))
  return s, X, Y, { L = L, T = T, pw = pw, ph = ph, R = R }
end

local function svg_legend(s, box, entries)
  for i, e in ipairs(entries) do
    local y = box.T + 10 + (i - 1) * 18
    local x = box.L + box.pw + 15
    s[#s + 1] = ('<rect x="%d" y="%d" width="12" height="12" fill="%s"/>'):format(x, y - 10, e.color)
    s[#s + 1] = ('<text x="%d" y="%d">%s</text>'):format(x + 18, y, xml(e.name))
  end
end

local function write_file(path, s)
  local ok, err = al.write_atomic(path, s)
  if not ok then error("report: cannot write " .. path .. ": " .. err, 0) end
end

local function svg_scatter(path, p)
  local xs, ys = {}, {}
  for _, se in ipairs(p.series) do
    for _, pt in ipairs(se.points) do xs[#xs + 1] = pt[1]; ys[#ys + 1] = pt[2] end
  end
  local ylo, yhi = math.min(table.unpack(ys)), math.max(table.unpack(ys))
  local pad = math.max((yhi - ylo) * 0.1, 0.5)
  local yt = nice_ticks(ylo - pad, yhi + pad, 6)
  local xt = { 0, 0.2, 0.4, 0.6, 0.8, 1.0 }
  local s, X, Y, box = svg_frame(820, 540, p.title, p.xlabel, p.ylabel, { 0, 1.05 }, { yt[1], yt[#yt] }, xt, yt)
  for _, se in ipairs(p.series) do
    for _, pt in ipairs(se.points) do
      s[#s + 1] = ('<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s" fill-opacity="0.7"/>'):format(X(pt[1]), Y(pt[2]), se.color)
    end
    if se.mean then
      local m = se.mean
      local sd = m[3] == m[3] and m[3] or 0
      s[#s + 1] = ('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="1.5"/>'):format(X(m[1]),
        Y(m[2] - sd), X(m[1]), Y(m[2] + sd), se.color)
      s[#s + 1] = ('<rect x="%.1f" y="%.1f" width="10" height="10" fill="none" stroke="%s" stroke-width="2"/>')
        :format(X(m[1]) - 5, Y(m[2]) - 5, se.color)
    end
  end
  svg_legend(s, box, p.series)
  s[#s + 1] = "</svg>"
  write_file(path, table.concat(s, "\n") .. "\n")
end

local function svg_bars(path, p)
  -- two panels side by side would need two frames; stack them vertically in one file
  local parts = { ('<svg xmlns="http://www.w3.org/2000/svg" width="900" height="%d" font-family="sans-serif" font-size="12">')
    :format(420 * #p.panels) }
  for k, panel in ipairs(p.panels) do
    local vmax = 1
    for _, se in ipairs(p.series) do
      for _, v in ipairs(panel.values[se.name] or {}) do if isnum(v) then vmax = math.max(vmax, v) end end
    end
    local yt = nice_ticks(0, vmax * 1.1, 5)
    local ng, ns = #p.groups, #p.series
    local xt, labels = {}, {}
    for g = 1, ng do xt[g] = g; labels[g] = p.groups[g] end
    local s, X, Y, box = svg_frame(900, 420, panel.title, "", panel.ylabel, { 0.5, ng + 0.5 }, { 0, yt[#yt] }, xt, yt, labels)
    local bw = 0.8 / ns
    for si, se in ipairs(p.series) do
      for g = 1, ng do
        local v = (panel.values[se.name] or {})[g]
        if isnum(v) then
          local x0 = g - 0.4 + (si - 1) * bw
          s[#s + 1] = ('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>'):format(X(x0), Y(v),
            X(x0 + bw) - X(x0) - 1, Y(0) - Y(v), se.color)
        end
      end
    end
    s[#s + 1] = ('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black" stroke-dasharray="4 3"/>'):format(box.L,
      Y(1), box.L + box.pw, Y(1))
    svg_legend(s, box, p.series)
    s[#s + 1] = "</svg>"
    parts[#parts + 1] = ('<g transform="translate(0 %d)">'):format((k - 1) * 420)
    -- drop the inner <svg> wrapper's first line (kept the rest)
    table.remove(s, 1)
    s[#s] = nil
    parts[#parts + 1] = table.concat(s, "\n")
    parts[#parts + 1] = "</g>"
  end
  parts[#parts + 1] = "</svg>"
  write_file(path, table.concat(parts, "\n") .. "\n")
end

local function run_gnuplot(script_path, script)
  write_file(script_path, script)
  local p = io.popen("gnuplot " .. q(script_path) .. " 2>&1")
  local out = p:read("a")
  local ok = p:close()
  if not ok then error("report: gnuplot failed on " .. script_path .. ": " .. out, 0) end
  return out
end

local function gp_terminals(base, body)
  return table.concat({
    "set terminal svg size 880,560 dynamic noenhanced font 'Sans,12' background rgb 'white'",
    "set output " .. gp_str(base .. ".svg"), body, "unset output",
    "set terminal pngcairo size 880,560 noenhanced font 'Sans,10' background rgb 'white'",
    "set output " .. gp_str(base .. ".png"), body, "unset output" }, "\n")
end

-- Points of normalizers with the same density (every dense one sits at 1.0) would hide
-- each other: each normalizer's points are shifted by a fixed JITTER step (said on the axis).
local JITTER = 0.006

local function scatter_data(A, d)
  local series = {}
  local present = {}
  for _, n in ipairs(A.normalizers) do if A.groups[d][n] then present[#present + 1] = n end end
  for _, n in ipairs(A.normalizers) do
    local g = A.groups[d][n]
    if g then
      local k
      for j, m in ipairs(present) do if m == n then k = j end end
      local off = (k - (#present + 1) / 2) * JITTER
      local se = { name = n, color = color_of(A, n), points = {}, pt = (style_index(A, n) - 1) % 7 + 1 }
      local dens = {}
      for _, r in ipairs(g.runs) do
        if isnum(r.density) then
          se.points[#se.points + 1] = { r.density + off, 100 * r.acc, r.seed }
          dens[#dens + 1] = r.density
        end
      end
      if #dens > 0 then se.mean = { mean(dens) + off, 100 * g.acc.mean, 100 * (g.acc.sd or 0) } end
      if #se.points > 0 then series[#series + 1] = se end
    end
  end
  return series, (#present - 1) / 2 * JITTER
end

-- Draw the plots into folder `dir`: per dataset accuracy vs support density and learning
-- curves (mean ± sd per epoch), and runtime bars. opts.tool = "gnuplot" | "svg" (default: gnuplot when installed). Returns
-- { by_dataset = { [label] = {svg=, png=} }, runtime = {svg=, png=}, files = {...}, tool = }.
function report.plots(A, dir, opts)
  opts = opts or {}
  os.execute("mkdir -p " .. q(dir))
  local tool = opts.tool or (have_gnuplot() and "gnuplot" or "svg")
  local res = { by_dataset = {}, files = {}, tool = tool == "gnuplot" and "gnuplot (SVG and PNG; the .gp scripts are kept)" or "attnlab's SVG writer (gnuplot not found)" }
  for _, d in ipairs(A.datasets) do
    local series, max_off = scatter_data(A, d)
    if #series > 0 then
      local base = dir .. "/acc_vs_density_" .. al.sweep.sanitize(d)
      local nseeds = 0
      for _, se in ipairs(series) do nseeds = math.max(nseeds, #se.points) end
      local title = ("%s: test accuracy vs attention support density (%d seed%s; squares: mean ± sd)"):format(d, nseeds,
        nseeds == 1 and "" or "s")
      local xlabel = ("support density (share of keys with nonzero weight; 1 = dense); normalizers offset by up to ±%.3f")
        :format(max_off)
      if tool == "gnuplot" then
        local g = {}
        for i, se in ipairs(series) do
          g[#g + 1] = ("$s%d << EOD"):format(i)
          for _, pt in ipairs(se.points) do g[#g + 1] = ("%.9g %.9g %d"):format(pt[1], pt[2], pt[3]) end
          g[#g + 1] = "EOD"
          g[#g + 1] = ("$m%d << EOD"):format(i)
          g[#g + 1] = ("%.9g %.9g %.9g"):format(se.mean[1], se.mean[2], se.mean[3] == se.mean[3] and se.mean[3] or 0)
          g[#g + 1] = "EOD"
        end
        local body = { "set title " .. gp_str(title), "set xlabel " .. gp_str(xlabel),
                       "set ylabel 'test accuracy (%)'", "set key outside right top", "set grid",
                       "set xrange [0:1.05]", "set offsets 0, 0, graph 0.08, graph 0.08" }
        local pl = {}
        for i, se in ipairs(series) do
          pl[#pl + 1] = ("$s%d using 1:2 with points pt %d ps 0.8 lc rgb '%s' title %s"):format(i, ({ 7, 9, 5, 11, 13, 15, 3 })[se.pt],
            se.color, gp_str(se.name))
          pl[#pl + 1] = ("$m%d using 1:2:3 with yerrorbars pt 4 ps 2 lw 2 lc rgb '%s' notitle"):format(i, se.color)
        end
        body[#body + 1] = "plot " .. table.concat(pl, ", \\\n     ")
        run_gnuplot(base .. ".gp", table.concat(g, "\n") .. "\n" .. gp_terminals(base, table.concat(body, "\n")) .. "\n")
        res.by_dataset[d] = { svg = base .. ".svg", png = base .. ".png", gp = base .. ".gp" }
        res.files[#res.files + 1] = base .. ".png"
        res.files[#res.files + 1] = base .. ".svg"
      else
        svg_scatter(base .. ".svg", { title = title, xlabel = xlabel, ylabel = "test accuracy (%)", series = series })
        res.by_dataset[d] = { svg = base .. ".svg" }
        res.files[#res.files + 1] = base .. ".svg"
      end
    end
  end

  -- learning curves: per dataset, test accuracy per epoch, mean line and ±sd band per normalizer
  res.curves = {}
  for _, d in ipairs(A.datasets) do
    local cv = A.curves and A.curves[d]
    if cv and cv.epochs > 1 then
      local series = {}
      for _, n in ipairs(A.normalizers) do
        local cn = cv[n]
        if cn then
          local pts = {}
          for ep = 1, cv.epochs do
            if cn.n[ep] > 0 then
              local sd = cn.sd[ep] == cn.sd[ep] and cn.sd[ep] or 0
              pts[#pts + 1] = { ep, cn.mean[ep], cn.mean[ep] - sd, cn.mean[ep] + sd }
            end
          end
          if #pts > 0 then series[#series + 1] = { name = n, color = color_of(A, n), points = pts, seeds = cn.n[1] } end
        end
      end
      local base = dir .. "/curve_" .. al.sweep.sanitize(d)
      local title = ("%s: test accuracy per epoch (mean, band ± sd over seeds)"):format(d)
      if tool == "gnuplot" then
        local g = {}
        for i, se in ipairs(series) do
          g[#g + 1] = ("$c%d << EOD"):format(i)
          for _, pt in ipairs(se.points) do g[#g + 1] = ("%d %.9g %.9g %.9g"):format(pt[1], pt[2], pt[3], pt[4]) end
          g[#g + 1] = "EOD"
        end
        local body = { "set title " .. gp_str(title), "set xlabel 'epoch'", "set ylabel 'test accuracy (%)'",
                       "set key outside right top", "set grid", ("set xrange [1:%d]"):format(cv.epochs), "set xtics 1" }
        local pl = {}
        for i, se in ipairs(series) do
          pl[#pl + 1] = ("$c%d using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '%s' notitle"):format(i, se.color)
          pl[#pl + 1] = ("$c%d using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '%s' title %s"):format(i, se.color,
            gp_str(("%s (%d seed%s)"):format(se.name, se.seeds, se.seeds == 1 and "" or "s")))
        end
        body[#body + 1] = "plot " .. table.concat(pl, ", \\\n     ")
        run_gnuplot(base .. ".gp", table.concat(g, "\n") .. "\n" .. gp_terminals(base, table.concat(body, "\n")) .. "\n")
        res.curves[d] = { svg = base .. ".svg", png = base .. ".png", gp = base .. ".gp" }
        res.files[#res.files + 1] = base .. ".png"
        res.files[#res.files + 1] = base .. ".svg"
      else
        local lo, hi = math.huge, -math.huge
        for _, se in ipairs(series) do
          for _, pt in ipairs(se.points) do lo, hi = math.min(lo, pt[3]), math.max(hi, pt[4]) end
        end
        local yt = nice_ticks(lo, hi, 6)
        local xt = {}
        for ep = 1, cv.epochs do xt[#xt + 1] = ep end
        local sv, X, Y, box = svg_frame(820, 540, title, "epoch", "test accuracy (%)", { 1, math.max(cv.epochs, 2) },
          { yt[1], yt[#yt] }, xt, yt)
        for _, se in ipairs(series) do
          local band, line = {}, {}
          for _, pt in ipairs(se.points) do band[#band + 1] = ("%.1f,%.1f"):format(X(pt[1]), Y(pt[4])) end
          for k = #se.points, 1, -1 do band[#band + 1] = ("%.1f,%.1f"):format(X(se.points[k][1]), Y(se.points[k][3])) end
          for _, pt in ipairs(se.points) do line[#line + 1] = ("%.1f,%.1f"):format(X(pt[1]), Y(pt[2])) end
          sv[#sv + 1] = ('<polygon points="%s" fill="%s" fill-opacity="0.12" stroke="none"/>'):format(table.concat(band, " "), se.color)
          sv[#sv + 1] = ('<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>'):format(table.concat(line, " "), se.color)
        end
        svg_legend(sv, box, series)
        sv[#sv + 1] = "</svg>"
        write_file(base .. ".svg", table.concat(sv, "\n") .. "\n")
        res.curves[d] = { svg = base .. ".svg" }
        res.files[#res.files + 1] = base .. ".svg"
      end
    end
  end

  -- runtime bars: clusters = datasets, bars = normalizers, relative to the baseline
  local norms, groups = {}, {}
  for _, d in ipairs(A.datasets) do
    local any = false
    for _, n in ipairs(A.normalizers) do if A.runtime[d][n] and A.runtime[d][n].train_rel then any = true end end
    if any then groups[#groups + 1] = d end
  end
  for _, n in ipairs(A.normalizers) do
    for _, d in ipairs(groups) do
      if A.runtime[d][n] and A.runtime[d][n].train_rel then norms[#norms + 1] = { name = n, color = color_of(A, n) } break end
    end
  end
  if #groups > 0 and #norms > 0 then
    local base = dir .. "/runtime"
    local panels = {
      { key = "train_rel", title = "training step time relative to " .. A.baseline .. " (median over seeds)", ylabel = "× " .. A.baseline },
      { key = "infer_rel", title = "inference time per example relative to " .. A.baseline, ylabel = "× " .. A.baseline },
    }
    if tool == "gnuplot" then
      local g = { "set datafile missing '?'" }
      for k, panel in ipairs(panels) do
        g[#g + 1] = ("$rt%d << EOD"):format(k)
        local hdr = { "dataset" }
        for _, n in ipairs(norms) do hdr[#hdr + 1] = '"' .. n.name .. '"' end
        g[#g + 1] = table.concat(hdr, " ")
        for _, d in ipairs(groups) do
          local row = { '"' .. d .. '"' }
          for _, n in ipairs(norms) do
            local rt = A.runtime[d][n.name]
            local v = rt and rt[panel.key]
            row[#row + 1] = isnum(v) and ("%.6g"):format(v) or "?"
          end
          g[#g + 1] = table.concat(row, " ")
        end
        g[#g + 1] = "EOD"
      end
      local body = { "set multiplot layout 2,1", "set style data histograms", "set style histogram clustered gap 1",
                     "set style fill solid 0.85 border -1", "set boxwidth 0.9", "set key outside right top",
                     "set grid ytics" }
      for k, panel in ipairs(panels) do
        local vmax = 1
        for _, d in ipairs(groups) do
          for _, n in ipairs(norms) do
            local v = A.runtime[d][n.name] and A.runtime[d][n.name][panel.key]
            if isnum(v) and v > vmax then vmax = v end
          end
        end
        body[#body + 1] = ("set yrange [0:%.4g]"):format(vmax * 1.15)
        body[#body + 1] = "set title " .. gp_str(panel.title)
        body[#body + 1] = "set ylabel " .. gp_str(panel.ylabel)
        local pl = {}
        for j, n in ipairs(norms) do
          pl[#pl + 1] = ("$rt%d using %d%s lc rgb '%s' title columnheader(%d)"):format(k, j + 1, j == 1 and ":xtic(1)" or "",
            n.color, j + 1)
        end
        pl[#pl + 1] = "1 with lines dt 2 lc rgb 'black' notitle"
        body[#body + 1] = "plot " .. table.concat(pl, ", \\\n     ")
      end
      body[#body + 1] = "unset multiplot"
      run_gnuplot(base .. ".gp", table.concat(g, "\n") .. "\n" .. gp_terminals(base, table.concat(body, "\n")) .. "\n")
      res.runtime = { svg = base .. ".svg", png = base .. ".png", gp = base .. ".gp" }
      res.files[#res.files + 1] = base .. ".png"
      res.files[#res.files + 1] = base .. ".svg"
    else
      local ps = {}
      for _, panel in ipairs(panels) do
        local values = {}
        for _, n in ipairs(norms) do
          values[n.name] = {}
          for gi, d in ipairs(groups) do
            local rt = A.runtime[d][n.name]
            values[n.name][gi] = rt and rt[panel.key] or NAN
          end
        end
        ps[#ps + 1] = { title = panel.title, ylabel = panel.ylabel, values = values }
      end
      svg_bars(base .. ".svg", { groups = groups, series = norms, panels = ps })
      res.runtime = { svg = base .. ".svg" }
      res.files[#res.files + 1] = base .. ".svg"
    end
  end
  return res
end

-- Load, analyze, plot and write the report. opts: out (Markdown path; default
-- DIR/REPORT.md), plots_dir (default: <folder of out>/plots), plots = false to skip them,
-- tool, baseline. Returns the Markdown, the analysis and the plots.
function report.run(dir, opts)
  opts = opts or {}
  local data = report.load(dir)
  if #data.runs == 0 and #data.errors == 0 then
    if #data.unreadable > 0 then
      local names = {}
      for _, u in ipairs(data.unreadable) do names[#names + 1] = u.name .. ".json (" .. u.why .. ")" end
      error(("report: no readable record in %s; unreadable: %s"):format(dir, table.concat(names, "; ")), 0)
    end
    error(("report: no records in %s (is it the folder a sweep wrote?)"):format(dir), 0)
  end
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
