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

  -- Normalised dataset entries: { label =, dataset =, study =, overrides = {...} }.
  local function dataset_entries(list)
    local out, seen = {}, {}
    for i, d in ipairs(list) do
      local e
      if type(d) == "string" then
        e = { label = d, dataset = d, study = true, overrides = {} }
      elseif type(d) == "table" then
        local label = d.name or d.label or d.dataset
        if type(label) ~= "string" then error(("sweep: datasets[%d] needs a name"):format(i), 0) end
        local ov = {}
        for k, v in pairs(d) do
          if k ~= "name" and k ~= "label" and k ~= "dataset" and k ~= "study" and k ~= "description" then ov[k] = v end
        end
        check_schedule(("datasets[%d] (%s)"):format(i, label), ov)
        e = { label = label, dataset = d.dataset or label, study = d.study ~= false, overrides = ov,
              description = d.description }
      else
        error(("sweep: datasets[%d] is a %s, want a name or a table"):format(i, type(d)), 0)
      end
      if seen[e.label] then error(("sweep: dataset '%s' is listed twice"):format(e.label), 0) end
      seen[e.label] = true
      out[#out + 1] = e
    end
    return out
  end

  -- Check an experiment table; returns it (with defaults filled in) or raises a message that
  -- names the offending field.
  function sweep.validate(exp, where)
    where = where or "experiment"
    if type(exp) ~= "table" then error(("sweep: %s did not return a table"):format(where), 0) end
    local function list_of(key, kind)
      local v = exp[key]
      if type(v) ~= "table" or #v == 0 then error(("sweep: %s: '%s' must be a non-empty list"):format(where, key), 0) end
      for i, x in ipairs(v) do
        if kind == "integer" and math.type(x) ~= "integer" then
          error(("sweep: %s: %s[%d] = %s, want an integer"):format(where, key, i, tostring(x)), 0)
        elseif kind == "string" and type(x) ~= "string" then
          error(("sweep: %s: %s[%d] = %s, want a string"):format(where, key, i, tostring(x)), 0)
        end
      end
    end
    list_of("datasets")
    list_of("normalizers", "string")
    list_of("seeds", "integer")
    exp.name = exp.name or "sweep"
    if type(exp.name) ~= "string" then error(("sweep: %s: name must be a string"):format(where), 0) end
    exp.baseline = exp.baseline or "softmax"
    exp.schedule = exp.schedule or {}
    check_schedule(where .. ": schedule", exp.schedule)
    for label, ov in pairs(exp.overrides or {}) do check_schedule(("%s: overrides.%s"):format(where, tostring(label)), ov) end
    local entries = dataset_entries(exp.datasets)
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
    for i, f in ipairs(exp.families or {}) do
      if type(f) ~= "table" or type(f.name) ~= "string" then
        error(("sweep: %s: families[%d] must be a table with a name"):format(where, i), 0)
      end
    end
    -- every value, before any run starts: an unknown normalizer or epochs = -1 is an error here,
    -- not a failed run per (dataset, seed) later
    local function clean(e) return (tostring(e):gsub("^[^%s:]+%.lua:%d+: ", ""):gsub("^train: ", "")) end
    for i, n in ipairs(exp.normalizers) do
      local ok, e = pcall(al.nn.Normalizer.parse, n)
      if not ok then error(("sweep: %s: normalizers[%d]: %s"):format(where, i, clean(e)), 0) end
    end
    for i, sd in ipairs(exp.seeds) do
      if sd < 1 then error(("sweep: %s: seeds[%d] = %d, want a positive integer"):format(where, i, sd), 0) end
    end
    for _, e in ipairs(entries) do
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
      candidates[#candidates + 1] = root .. "/experiments/" .. path
      if not lua then candidates[#candidates + 1] = root .. "/experiments/" .. path .. ".lua" end
    end
    for _, c in ipairs(candidates) do
      if file_exists(c) then
        local chunk, err = loadfile(c)
        if not chunk then error("sweep: " .. err, 0) end
        local ok, exp = pcall(chunk)
        if not ok then error(("sweep: %s raised: %s"):format(c, tostring(exp)), 0) end
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
      e.quick_applied = true
      sweep.validate(e, exp.name .. " (quick)")
    end
    return e
  end

  -- Every run of the (resolved) experiment, seed-major. opts: out (folder), threads, only
  -- (Lua patterns separated by commas, matched against the record name; a pattern that is not
  -- valid is plain text; a run is kept if any matches).
  function sweep.runs(exp, opts)
    opts = opts or {}
    local dir = abspath(assert(opts.out, "sweep.runs: opts.out (the results folder) is required"))
    local threads = opts.threads or 1
    local entries = dataset_entries(exp.datasets)
    local runs = {}
    for _, seed in ipairs(exp.seeds) do
      for _, e in ipairs(entries) do
        for _, norm in ipairs(exp.normalizers) do
          local name = sweep.record_name(e.label, norm, seed)
          local keep = true
          if opts.only then   -- several patterns separated by commas: a run matching any of them
            keep = false
            for pat in tostring(opts.only):gmatch("[^,]+") do
              local ok, hit = pcall(string.find, name, pat)
              if not ok then hit = name:find(pat, 1, true) end
              keep = keep or hit ~= nil
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
    return runs
  end
  H.dataset_entries = dataset_entries
end
