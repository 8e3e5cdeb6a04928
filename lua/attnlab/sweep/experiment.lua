-- attnlab.sweep.experiment -- experiment tables: loading, checking, --quick, and the list of runs.
-- Part of attnlab.sweep: sweep/init.lua installs these functions into its table, so callers
-- keep using al.sweep.<name>; H holds the helpers init.lua shares with its parts.
local al = require "attnlab"
local util = require "attnlab.util"

return function(sweep, H)
  local copy, merge, file_exists, abspath = H.copy, H.merge, H.file_exists, H.abspath

  -- ---- experiments ----------------------------------------------------------------------------
  local EXTRA_KEYS = { patch = true, train_limit = true, test_limit = true, threads = true }
  local RUN_KEYS = { dataset = true, normalizer = true, seed = true, out = true, checkpoint = true }

  local function check_schedule(where, t)
    if type(t) ~= "table" then error(("sweep: %s must be a table, got %s"):format(where, type(t)), 0) end
    local defaults = al.train.DEFAULTS
    for k in pairs(t) do
      if type(k) ~= "string" or (defaults[k] == nil and not EXTRA_KEYS[k]) then
        local names = {}
        for n in pairs(defaults) do names[#names + 1] = n end
        for n in pairs(EXTRA_KEYS) do names[#names + 1] = n end
        table.sort(names)
        error(("sweep: %s has unknown key '%s'; train keys are: %s"):format(where, tostring(k), table.concat(names, ", ")), 0)
      end
      if RUN_KEYS[k] then
        error(("sweep: %s sets '%s', which the sweep sets per run"):format(where, k), 0)
      end
    end
  end

  -- The keys an experiment table, its quick preset, a family and the slurm table may have
  -- (sweep/init.lua's header says what each means). Anything else is refused: a misspelt key
  -- (seed = {...}, schedul = {...}) would otherwise be ignored and the defaults run in its place.
  local EXP_KEYS = { "name", "description", "datasets", "normalizers", "seeds", "baseline", "schedule", "overrides",
                     "families", "quick", "slurm" }
  local QUICK_KEYS = { "seeds", "schedule", "overrides", "datasets", "normalizers", "families", "baseline" }
  local FAMILY_KEYS = { "name", "title", "baseline", "normalizers", "datasets" }
  local SLURM_KEYS = { "time", "mem", "partition", "extra" }
  -- set on the table by sweep.load and sweep.resolve, never by the file (load refuses them there)
  local SET_BY_SWEEP = { file = true, quick_applied = true }

  -- A value as a message shows it: "number 5", "string 'x'", "a table".
  local function what(v)
    if v == nil then return "nothing" end
    if type(v) == "table" then return "a table" end
    if type(v) == "string" then return ("string '%s'"):format(v) end
    return ("%s %s"):format(type(v), tostring(v))
  end

  -- An entry of a list as a message shows it: 1.5, '2', a table.
  local function shown(v)
    if type(v) == "number" then return tostring(v) end
    if type(v) == "string" then return ("'%s'"):format(v) end
    return what(v)
  end

  -- A list in the strict sense (util.is_list): ipairs would silently skip the rest, or stop at
  -- a hole, and run fewer entries than the file lists.
  local is_list = require("attnlab.util").is_list

  -- Levenshtein distance, for "did you mean" on a misspelt key.
  local function distance(a, b)
    local prev = {}
    for j = 0, #b do prev[j] = j end
    for i = 1, #a do
      local cur = { [0] = i }
      for j = 1, #b do
        cur[j] = math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a:sub(i, i) == b:sub(j, j) and 0 or 1))
      end
      prev = cur
    end
    return prev[#b]
  end

  -- Refuse a key of t not in `known` (a list), naming the closest known key and all of them.
  local function check_keys(t, known, fail, what_t, also)
    local set = {}
    for _, k in ipairs(known) do set[k] = true end
    for k in pairs(t) do
      if not set[k] and not (also and also[k]) then
        local best, bd = nil, 3
        if type(k) == "string" then
          for _, n in ipairs(known) do
            local d = distance(k, n)
            if d < bd then best, bd = n, d end
          end
        end
        local sorted = copy(known)
        table.sort(sorted)
        fail("%s has unknown key '%s'%s; the known keys are: %s", what_t, tostring(k),
          best and (" (did you mean '%s'?)"):format(best) or "", table.concat(sorted, ", "))
      end
    end
  end

  -- Normalised dataset entries: { label =, dataset =, study =, overrides = {...} }. where: the
  -- file, for messages (validate passes it; later callers get lists validate has checked).
  local function dataset_entries(list, where)
    local at = where and (where .. ": ") or ""
    local out, seen = {}, {}
    for i, d in ipairs(list) do
      local e
      if type(d) == "string" then
        e = { label = d, dataset = d, study = true, overrides = {} }
      elseif type(d) == "table" then
        local label = d.name or d.label or d.dataset
        if type(label) ~= "string" then error(("sweep: %sdatasets[%d] needs a name"):format(at, i), 0) end
        local ov = {}
        for k, v in pairs(d) do
          if k ~= "name" and k ~= "label" and k ~= "dataset" and k ~= "study" and k ~= "description" then ov[k] = v end
        end
        check_schedule(("%sdatasets[%d] (%s)"):format(at, i, label), ov)
        e = { label = label, dataset = d.dataset or label, study = d.study ~= false, overrides = ov,
              description = d.description }
      else
        error(("sweep: %sdatasets[%d] is %s, want a name or a table"):format(at, i, what(d)), 0)
      end
      if seen[e.label] then error(("sweep: %sdataset '%s' is listed twice"):format(at, e.label), 0) end
      seen[e.label] = true
      out[#out + 1] = e
    end
    return out
  end

  -- One spelling per normalizer ("topk:.5" and "topk:0.5" are both topk with ratio 0.5), from
  -- what Normalizer.parse makes of the name; two entries with one key run the same thing.
  local function normalizer_key(name)
    local spec = al.nn.Normalizer.parse(name)
    local parts = { spec.kind }
    for _, k in ipairs(util.sorted_keys(spec)) do
      if k ~= "kind" then parts[#parts + 1] = ("%s=%.17g"):format(k, spec[k]) end
    end
    return table.concat(parts, " ")
  end

  -- The loader's own name for a dataset (al.data.by_name has aliases: fmnist = fashion_mnist).
  local function dataset_key(name)
    local fn = al.data.by_name[name]
    if al.data[name] == fn then return name end
    for _, k in ipairs(util.sorted_keys(al.data.by_name)) do
      if al.data[k] == fn then return k end
    end
    return name
  end

  local function same_table(a, b)
    for k, v in pairs(a) do
      if type(v) == "table" and type(b[k]) == "table" then
        if not (same_table(v, b[k]) and same_table(b[k], v)) then return false end
      elseif b[k] ~= v then return false end
    end
    for k in pairs(b) do if a[k] == nil then return false end end
    return true
  end

  -- The types of the fields an experiment and its quick preset share; `fail` names the file.
  local function check_list(fail, key, v, kind)
    if not is_list(v) or #v == 0 then
      fail("'%s' must be a non-empty list, got %s", key, type(v) == "table" and (#v == 0 and next(v) == nil and
        "an empty table" or "a table that is not a list") or what(v))
    end
    for i, x in ipairs(v) do
      if kind == "integer" and math.type(x) ~= "integer" then
        fail("%s[%d] = %s, want an integer", key, i, shown(x))
      elseif kind == "string" and type(x) ~= "string" then
        fail("%s[%d] = %s, want a string", key, i, shown(x))
      end
    end
  end
  local function check_overrides(fail, key, v)
    if type(v) ~= "table" then
      fail("%s must be a table of per-dataset schedules ({ cifar10 = { epochs = 20 } }), got %s", key, what(v))
    end
    for label, ov in pairs(v) do
      if type(label) ~= "string" then fail("%s has key %s; its keys are dataset names", key, what(label)) end
      if type(ov) ~= "table" then fail("%s.%s must be a table of schedule keys, got %s", key, label, what(ov)) end
    end
  end
  local function check_types(fail, t, prefix)
    for _, k in ipairs({ "datasets", "normalizers", "seeds" }) do
      if t[k] ~= nil then check_list(fail, prefix .. k, t[k], k == "seeds" and "integer" or k == "normalizers" and "string" or nil) end
    end
    if t.baseline ~= nil and type(t.baseline) ~= "string" then
      fail("%sbaseline must be a normalizer name, got %s", prefix, what(t.baseline))
    end
    if t.schedule ~= nil and type(t.schedule) ~= "table" then
      fail("%sschedule must be a table of train keys, got %s", prefix, what(t.schedule))
    end
    if t.overrides ~= nil then check_overrides(fail, prefix .. "overrides", t.overrides) end
    if t.families ~= nil and not is_list(t.families) then
      fail("%sfamilies must be a list of { name =, baseline =, normalizers = {...}, datasets = {...} }, got %s", prefix,
        what(t.families))
    end
  end

  -- The report's Holm families: every name in them must be one the experiment runs, else the
  -- family silently tests fewer comparisons (or none) than it says.
  local function check_families(fail, exp, entries)
    local runs, by_key, labels = {}, {}, {}
    for _, n in ipairs(exp.normalizers) do runs[n] = true; by_key[normalizer_key(n)] = n end
    for _, e in ipairs(entries) do labels[e.label] = true end
    local function normalizer(fw, field, n)
      if type(n) ~= "string" then fail("%s: %s must be a normalizer name, got %s", fw, field, what(n)) end
      if runs[n] then return end
      local ok, key = pcall(normalizer_key, n)
      local alias = ok and by_key[key]
      fail("%s: %s = '%s' is not a normalizer the experiment runs%s (it runs: %s)", fw, field, n,
        alias and ("; write it as in normalizers: '%s'"):format(alias) or "", table.concat(exp.normalizers, ", "))
    end
    local names = {}
    for i, f in ipairs(exp.families or {}) do
      if type(f) ~= "table" or type(f.name) ~= "string" then
        fail("families[%d] must be a table with a name", i)
      end
      local fw = ("families[%d] (%s)"):format(i, f.name)
      if names[f.name] then fail("%s: the name '%s' is also families[%d]'s", fw, f.name, names[f.name]) end
      names[f.name] = i
      check_keys(f, FAMILY_KEYS, fail, fw)
      if f.title ~= nil and type(f.title) ~= "string" then fail("%s: title must be a string, got %s", fw, what(f.title)) end
      local base = f.baseline or exp.baseline
      normalizer(fw, f.baseline and "baseline" or "baseline (the experiment's)", base)
      if f.normalizers ~= "all" and f.normalizers ~= nil then
        if not is_list(f.normalizers) or #f.normalizers == 0 then
          fail('%s: normalizers must be a non-empty list of names or "all", got %s', fw, what(f.normalizers))
        end
        local seen = {}
        for j, n in ipairs(f.normalizers) do
          normalizer(fw, ("normalizers[%d]"):format(j), n)
          if n == base then fail("%s: normalizers[%d] = '%s' is the family's baseline (compared with itself)", fw, j, n) end
          if seen[n] then fail("%s: normalizer '%s' is listed twice", fw, n) end
          seen[n] = true
        end
      end
      if f.datasets ~= "study" and f.datasets ~= nil then
        if not is_list(f.datasets) or #f.datasets == 0 then
          fail('%s: datasets must be a non-empty list of dataset names or "study", got %s', fw, what(f.datasets))
        end
        local seen = {}
        for j, d in ipairs(f.datasets) do
          if type(d) ~= "string" or not labels[d] then
            local known = {}
            for _, e in ipairs(entries) do known[#known + 1] = e.label end
            fail("%s: datasets[%d] = %s is not a dataset the experiment runs (it runs: %s)", fw, j,
              type(d) == "string" and ("'" .. d .. "'") or what(d), table.concat(known, ", "))
          end
          if seen[d] then fail("%s: dataset '%s' is listed twice", fw, d) end
          seen[d] = true
        end
      end
    end
  end

  -- Check an experiment table; returns it (with defaults filled in) or raises a message that
  -- names the offending field.
  function sweep.validate(exp, where)
    where = where or "experiment"
    if type(exp) ~= "table" then error(("sweep: %s did not return a table"):format(where), 0) end
    local function fail(fmt, ...) error(("sweep: %s: " .. fmt):format(where, ...), 0) end
    -- unknown keys first: a misspelt 'seed' is the cause of the missing 'seeds'
    check_keys(exp, EXP_KEYS, fail, "the experiment table", SET_BY_SWEEP)
    check_types(fail, exp, "")
    check_list(fail, "datasets", exp.datasets)
    check_list(fail, "normalizers", exp.normalizers, "string")
    check_list(fail, "seeds", exp.seeds, "integer")
    exp.name = exp.name or "sweep"
    if type(exp.name) ~= "string" or exp.name == "" then fail("name must be a non-empty string, got %s", what(exp.name)) end
    if exp.description ~= nil and type(exp.description) ~= "string" then
      fail("description must be a string, got %s", what(exp.description))
    end
    exp.schedule = exp.schedule or {}
    check_schedule(where .. ": schedule", exp.schedule)
    for label, ov in pairs(exp.overrides or {}) do check_schedule(("%s: overrides.%s"):format(where, tostring(label)), ov) end
    for i, d in ipairs(exp.datasets) do
      if type(d) == "table" then
        local dw = ("datasets[%d]"):format(i)
        for _, k in ipairs({ "name", "label", "dataset", "description" }) do
          if d[k] ~= nil and type(d[k]) ~= "string" then fail("%s: %s must be a string, got %s", dw, k, what(d[k])) end
        end
        if d.study ~= nil and type(d.study) ~= "boolean" then fail("%s: study must be true or false, got %s", dw, what(d.study)) end
        if d.name and d.label and d.name ~= d.label then fail("%s: name '%s' and label '%s' differ; give one", dw, d.name, d.label) end
      end
    end
    local entries = dataset_entries(exp.datasets, where)
    local labels = {}
    for _, e in ipairs(entries) do labels[e.label] = true end
    for label in pairs(exp.overrides or {}) do
      if not labels[label] then error(("sweep: %s: overrides.%s names no dataset of the experiment"):format(where, label), 0) end
    end
    local seen = {}
    for _, n in ipairs(exp.normalizers) do
      if seen[n] then error(("sweep: %s: normalizer '%s' is listed twice"):format(where, n), 0) end
      seen[n] = true
    end
    seen = {}
    for _, s in ipairs(exp.seeds) do
      if seen[s] then error(("sweep: %s: seed %d is listed twice"):format(where, s), 0) end
      seen[s] = true
    end
    -- every value, before any run starts: an unknown normalizer or epochs = -1 is an error here,
    -- not a failed run per (dataset, seed) later
    local function clean(e) return util.error_text(e, "train") end
    local keys = {}
    for i, n in ipairs(exp.normalizers) do
      local ok, k = pcall(normalizer_key, n)
      if not ok then error(("sweep: %s: normalizers[%d]: %s"):format(where, i, clean(k)), 0) end
      -- two spellings of one normalizer would run (and count in the report) the same thing twice
      if keys[k] then
        fail("normalizers[%d] '%s' and normalizers[%d] '%s' are the same normalizer; list it once", keys[k],
          exp.normalizers[keys[k]], i, n)
      end
      keys[k] = i
    end
    for i, sd in ipairs(exp.seeds) do
      if sd < 1 then error(("sweep: %s: seeds[%d] = %d, want a positive integer"):format(where, i, sd), 0) end
    end
    -- the baseline of the report's comparisons: one of the normalizers run (softmax, the
    -- default, may be absent when there is nothing to compare: a single normalizer)
    local base, runs_it = exp.baseline or "softmax", false
    for _, n in ipairs(exp.normalizers) do runs_it = runs_it or n == base end
    if not runs_it and not (base == "softmax" and #exp.normalizers == 1) then
      if exp.baseline == nil then
        fail("no baseline given and the default, softmax, is not run: set baseline to one of %s",
          table.concat(exp.normalizers, ", "))
      end
      fail("baseline '%s' is not one of the normalizers (it runs: %s)", base, table.concat(exp.normalizers, ", "))
    end
    exp.baseline = base
    local cfgs = {}
    for i, e in ipairs(entries) do
      if not al.data.by_name[e.dataset] then
        local names = {}
        for k in pairs(al.data.by_name) do names[#names + 1] = k end
        table.sort(names)
        error(("sweep: %s: unknown dataset '%s'; known: %s"):format(where, tostring(e.dataset), table.concat(names, ", ")), 0)
      end
      local cfg = merge(merge(exp.schedule, e.overrides), (exp.overrides or {})[e.label])
      cfg.dataset, cfg.normalizer, cfg.seed = e.dataset, exp.normalizers[1], exp.seeds[1]
      local ok, err = pcall(al.train.config, cfg)
      if not ok then error(("sweep: %s: dataset %s: %s"):format(where, e.label, clean(err)), 0) end
      -- an alias (fmnist = fashion_mnist), or a variant that changes nothing, runs the same
      -- thing twice; labels that differ only in odd characters write the same record files
      cfg.dataset = dataset_key(e.dataset)
      for j = 1, i - 1 do
        local o = entries[j]
        if same_table(cfg, cfgs[j]) then
          fail("datasets[%d] '%s' and datasets[%d] '%s' are the same runs (dataset %s, same schedule); list it once",
            j, o.label, i, e.label, cfg.dataset)
        end
        if sweep.sanitize(o.label) == sweep.sanitize(e.label) then
          fail("datasets[%d] '%s' and datasets[%d] '%s' would write the same record files (%s__...)", j, o.label, i,
            e.label, sweep.sanitize(e.label))
        end
      end
      cfgs[i] = cfg
    end
    check_families(fail, exp, entries)
    if exp.slurm ~= nil then
      if type(exp.slurm) ~= "table" then fail("slurm must be a table { time =, mem =, partition =, extra = }, got %s", what(exp.slurm)) end
      check_keys(exp.slurm, SLURM_KEYS, fail, "slurm")
      for _, k in ipairs({ "time", "mem", "partition" }) do
        if exp.slurm[k] ~= nil and type(exp.slurm[k]) ~= "string" then fail("slurm.%s must be a string, got %s", k, what(exp.slurm[k])) end
      end
      if exp.slurm.extra ~= nil then check_list(fail, "slurm.extra", exp.slurm.extra, "string") end
    end
    -- the quick preset, with the experiment (so that a broken one is found without --quick too):
    -- its own keys and types, then the experiment it makes, checked as a whole
    if exp.quick ~= nil then
      if type(exp.quick) ~= "table" then fail("quick must be a table of what --quick changes, got %s", what(exp.quick)) end
      check_keys(exp.quick, QUICK_KEYS, fail, "quick")
      check_types(fail, exp.quick, "quick.")
      local merged = util.deep_merge(exp, exp.quick)
      merged.quick = nil
      sweep.validate(merged, where .. " (quick)")
    end
    return exp
  end

  -- Load an experiment file. `path` may also be a name under experiments/ ("normalizers/demo").
  function sweep.load(path)
    if type(path) ~= "string" or path == "" then error("sweep: no experiment given", 0) end
    local candidates = { path }
    local lua = path:match("%.lua$") ~= nil
    if not lua then candidates[#candidates + 1] = path .. ".lua" end
    if path:sub(1, 1) ~= "/" then   -- a name under experiments/ (never for absolute paths)
      local root = sweep.root()
      -- "experiments/normalizers/main.lua" typed outside the checkout: the checkout's (or the
      -- installed tree's) file, as the host finds "scripts/..." from anywhere
      if path:match("^experiments/") then
        candidates[#candidates + 1] = root .. "/" .. path
        if not lua then candidates[#candidates + 1] = root .. "/" .. path .. ".lua" end
      end
      candidates[#candidates + 1] = root .. "/experiments/" .. path
      if not lua then candidates[#candidates + 1] = root .. "/experiments/" .. path .. ".lua" end
    end
    for _, c in ipairs(candidates) do
      if file_exists(c) then
        local chunk, err = loadfile(c)
        if not chunk then error("sweep: " .. err, 0) end
        local ok, exp = pcall(chunk)
        if not ok then error(("sweep: %s raised: %s"):format(c, tostring(exp)), 0) end
        for k in pairs(SET_BY_SWEEP) do   -- validate tolerates them on loaded tables, not in files
          if type(exp) == "table" and exp[k] ~= nil then
            error(("sweep: %s: '%s' is set by the sweep, not by the experiment; remove it"):format(c, k), 0)
          end
        end
        exp = sweep.validate(exp, c)
        exp.file = abspath(c)
        return exp
      end
    end
    error(("sweep: experiment '%s' not found (looked for %s)"):format(path, table.concat(candidates, ", ")), 0)
  end

  -- The experiment with its --quick preset applied by util.deep_merge, the rule S2S presets
  -- use too (tables merge key by key, recursively; lists replace).
  function sweep.resolve(exp, opts)
    opts = opts or {}
    local e = copy(exp)
    e.schedule = copy(exp.schedule)
    e.overrides = {}
    for k, v in pairs(exp.overrides or {}) do e.overrides[k] = copy(v) end
    if opts.quick then
      local qk = exp.quick
      if type(qk) ~= "table" then error(("sweep: experiment '%s' has no quick preset"):format(exp.name), 0) end
      e = util.deep_merge(e, qk)
      -- the preset itself was checked with the experiment: the merged table is checked without
      -- it (else its quick would be applied and checked once more)
      e.quick = nil
      sweep.validate(e, (exp.file or exp.name) .. " (quick)")
      e.quick, e.quick_applied = qk, true
    end
    return e
  end

  -- Every run of the (resolved) experiment, seed-major. opts: out (folder), threads, only
  -- (Lua patterns separated by commas, spaces around each ignored, matched against the record
  -- name; a run is kept if any matches). A malformed pattern ('[', a trailing '%') is refused as
  -- such: record names are made of letters, digits, '.', '_' and '-', so read as plain text it
  -- could match nothing, and "no run matches" would hide the typo. So is a pattern that matches
  -- no run ('topk:0.25' for the records' topk-0.25): with others that do, the sweep would run
  -- fewer runs than asked for without a word.
  function sweep.runs(exp, opts)
    opts = opts or {}
    if type(opts.out) ~= "string" or opts.out == "" then
      error("sweep.runs: opts.out (the results folder) must be a non-empty path", 0)
    end
    local dir = abspath(opts.out)
    local threads = opts.threads or 1
    local entries = dataset_entries(exp.datasets)
    local pats, hits, names = {}, {}, {}
    if opts.only then
      for pat in tostring(opts.only):gmatch("[^,]+") do
        pat = pat:match("^%s*(.-)%s*$")
        if pat ~= "" then pats[#pats + 1] = pat end   -- ("" would match every run)
      end
      -- '' (or ' , '): no pattern at all, which would keep no run and end in a message naming nothing
      if #pats == 0 then
        error(("sweep: --only needs a Lua pattern matched against record names (such as %s), got %s"):format(
          (#exp.seeds > 0 and #exp.normalizers > 0 and entries[1]) and
            sweep.record_name(entries[1].label, exp.normalizers[1], exp.seeds[1]) or "<dataset>__<normalizer>__seed<k>",
          opts.only == "" and "''" or ("'" .. tostring(opts.only) .. "'")), 0)
      end
    end
    local runs = {}
    for _, seed in ipairs(exp.seeds) do
      for _, e in ipairs(entries) do
        for _, norm in ipairs(exp.normalizers) do
          local name = sweep.record_name(e.label, norm, seed)
          names[#names + 1] = name
          local keep = true
          if opts.only then   -- several patterns separated by commas: a run matching any of them
            keep = false
            for i, pat in ipairs(pats) do
              local ok, hit = pcall(string.find, name, pat)
              if not ok then
                error(("sweep: --only '%s' is not a valid Lua pattern: %s"):format(pat,
                  (tostring(hit):gsub("^bad argument #%d+ to '%w+' %((.*)%)$", "%1"))), 0)
              end
              if hit then keep, hits[i] = true, true end
            end
          end
          if keep then
            local cfg = merge(merge(exp.schedule, e.overrides), (exp.overrides or {})[e.label])
            cfg.dataset, cfg.normalizer, cfg.seed, cfg.threads = e.dataset, norm, seed, threads
            cfg.out = dir .. "/" .. name .. ".json"
            cfg.checkpoint = dir .. "/ckpt/" .. name .. ".ckpt"
            runs[#runs + 1] = {
              name = name, label = e.label, dataset = e.dataset, normalizer = norm, seed = seed, config = cfg,
              dir = dir, out = cfg.out, checkpoint = cfg.checkpoint,
              log_out = dir .. "/logs/" .. name .. ".out", log_err = dir .. "/logs/" .. name .. ".err",
            }
          end
        end
      end
    end
    for i, pat in ipairs(pats) do
      if not hits[i] then
        -- record names spell a normalizer's ':' as '-' (sweep.sanitize), '%-' in a pattern:
        -- suggested when that matches
        local alt, example = pat:gsub(":", "%%-"), nil
        if alt ~= pat then
          for _, n in ipairs(names) do
            local ok, hit = pcall(string.find, n, alt)
            if ok and hit then example = n break end
          end
        end
        if example then
          error(("sweep: --only '%s' matches no run of '%s': record names spell ':' as '-' ('%%-' in a pattern), " ..
            "try '%s' (it matches %s)"):format(pat, tostring(exp.name), alt, example), 0)
        end
        error(("sweep: --only '%s' matches no run of '%s' (record names look like %s)"):format(pat,
          tostring(exp.name), names[1] or "?"), 0)
      end
    end
    return runs
  end
  H.dataset_entries = dataset_entries
end
