-- attnlab.s2s.check -- every S2S config checked key by key before any work: one table of keys
-- per config section (a preset's teacher, profile, avit, distill, resolution, groupwise,
-- keeprate, layeraware, latency and its top level; the library's s2s.train_teacher,
-- s2s.avit, s2s.distill and s2s.resolution_bench configs), each key with what it must be.
-- The library checks its config with it (K.assert) and the scripts check the same tables
-- before loading a model or a dataset (K.check), so that a bad value is one line naming it
-- -- never an error from deep inside a run, after hours of training, nor a record of a
-- degenerate run (no rows, keep rates of 9, NaN accuracies).
--
--   local K = require "attnlab.s2s.check"
--   local path, why = K.check("distill", c)            -- nil when c is fine
--   -- path "stage2.epochs", why "needs a positive integer, got 'abc'"
--   K.assert("s2s.distill", "distill_config", c)       -- raises "s2s.distill: stage2.epochs needs ..."
--
-- Command-line values arrive untyped (cli.parse_pairs: a string, a number, true for an option
-- given without a value, a table for JSON or a comma list), so every kind checks the type
-- too, and a key no section has is refused with the section's keys: a misspelt key would
-- otherwise be ignored and a default silently used. K.check(schema, t, {partial = true})
-- checks only the keys present (a command line's --distill.KEY values, before they are merged
-- over the preset); the full check adds the rules that join keys (min_lr at most lr; layers
-- or strategy, not both; one keep rate per layer).
local al = require "attnlab"
local util = require "attnlab.util"

local K = {}

-- ---- values in messages -----------------------------------------------------------------------
-- A value as a message quotes it: 'abc', '5', 'nan' (never -nan: util.show), '1,2' for a list
-- of plain values (as a command line gives it), "a JSON object" for another table.
function K.show(v)
  if v == nil then return "nothing" end
  if type(v) == "table" then
    if next(v) == nil then return "an empty table ({} or [])" end
    local parts, n = {}, 0
    for _ in pairs(v) do n = n + 1 end
    for i = 1, #v do
      local x = v[i]
      if type(x) == "table" then return "a list of tables" end
      parts[i] = type(x) == "string" and x or util.show(x)
    end
    if #parts ~= n then return "a JSON object" end
    if #parts == 1 then return "'[" .. parts[1] .. "]'" end      -- only JSON makes a list of one
    return "'" .. table.concat(parts, ",") .. "'"
  end
  if type(v) == "string" then return "'" .. v .. "'" end
  return "'" .. util.show(v) .. "'"
end
local show = K.show

local finite = util.finite
-- sizes and counts below 2^31, as train.config and the scripts' "count" options have them: a
-- batch_size of 2^63 - 1 overflowed the loader's batch count to 0 (no step, yet a record)
local BIG = 1 << 31
local function posint(v) return math.type(v) == "integer" and v >= 1 and v < BIG end
-- what a value that is no posint needs: the bound is named only to a value beyond it
local function posint_want(v)
  return (math.type(v) == "integer" and v >= BIG) and "a positive integer below 2^31" or "a positive integer"
end
local is_list, is_object = util.is_list, util.is_object   -- (JSON's list and object)
local function is_model(v) return type(v) == "table" and getmetatable(v) ~= nil and v.depth ~= nil and v.block ~= nil end

-- ---- kinds: what a key must be ----------------------------------------------------------------
-- A kind is a function(v) -> nil (fine) or why, and optionally a sub-path (an element "[2]").
local function kind(want, ok)
  return function(v)
    if ok(v) then return nil end
    return ("needs %s, got %s"):format(want, show(v))
  end
end
local function enum(...)
  local set, names = {}, { ... }
  for _, n in ipairs(names) do set[n] = true end
  return kind(#names == 2 and (names[1] .. " or " .. names[2]) or ("one of " .. table.concat(names, ", ")),
    function(v) return set[v] == true end)
end
-- a positive integer, or a list of them (the consumers make a lone number a list of one: K.lists)
local function posints(want, allow_empty)
  return function(v)
    if posint(v) then return nil end
    if is_list(v) and (allow_empty or #v > 0) then
      for i, x in ipairs(v) do
        if not posint(x) then return ("needs %s, got %s"):format(posint_want(x), show(x)), ("[%d]"):format(i) end
      end
      return nil
    end
    return ("needs %s, got %s"):format(want, show(v))
  end
end

local KINDS = {
  posint = function(v) if not posint(v) then return ("needs %s, got %s"):format(posint_want(v), show(v)) end end,
  limit = function(v)
    if v ~= false and not posint(v) then return ("needs %s (false: all), got %s"):format(posint_want(v), show(v)) end
  end,
  posnum = kind("a finite number > 0", function(v) return finite(v) and v > 0 end),
  nonneg = kind("a finite number >= 0", function(v) return finite(v) and v >= 0 end),
  smoothing = kind("a number in [0, 1)", function(v) return type(v) == "number" and v >= 0 and v < 1 end),
  rate = kind("a keep rate in (0, 1]", function(v) return type(v) == "number" and v > 0 and v <= 1 end),
  bool = kind("true or false", function(v) return type(v) == "boolean" end),
  path = kind("a file path", function(v) return type(v) == "string" and v ~= "" end),
  folder = kind("a folder", function(v) return type(v) == "string" and v ~= "" end),
  name = kind("a name", function(v) return type(v) == "string" and v ~= "" end),
  table = kind("a table", function(v) return type(v) == "table" end),
  mode = enum("gather", "masked"),
  split = enum("test", "train"),
  pos_resample = enum("bicubic", "bilinear"),
  stage1_train = enum("all", "mixers"),
  posints = posints("positive integers like 224,384"),
  -- a seed given twice would train its students once and count them twice (a paired test
  -- over copies: "+2.00 (p 0)")
  seeds = function(v)
    local why, sub = posints("positive integers like 1,2,3")(v)
    if why then return why, sub end
    local seen = {}
    for _, x in ipairs(type(v) == "table" and v or {}) do
      if seen[x] then
        return ("has %d twice (%s): each seed trains its students once, so a repeated one would count the same runs twice")
          :format(x, show(v))
      end
      seen[x] = true
    end
  end,
  layers = posints("block numbers (1-based) like 4,5,6 ('[]': none)", true),
  -- one rate, or one per layer: each in (0, 1] (a rate of 9 or 0 would index nothing)
  rates = function(v)
    if type(v) == "number" then v = { v } end
    if not is_list(v) or #v == 0 then return ("needs keep rates in (0, 1] like 1,0.9,0.8, got %s"):format(show(v)) end
    for i, r in ipairs(v) do
      if type(r) ~= "number" or not (r > 0 and r <= 1) then
        return ("must be in (0, 1], got %s"):format(util.show(r)), ("[%d]"):format(i)
      end
    end
  end,
}

function KINDS.dataset(v)
  if type(v) == "string" and (v == "synthetic" or al.data.by_name[v]) then return nil end
  local names = { "synthetic" }
  for k in pairs(al.data.by_name) do names[#names + 1] = k end
  table.sort(names)
  return ("needs a dataset name: %s; got %s"):format(table.concat(names, ", "), show(v))
end

-- a model file, or (the library's callers) a model itself
function KINDS.model(v)
  if (type(v) == "string" and v ~= "") or is_model(v) then return nil end
  return ("needs a model file, got %s"):format(show(v))
end

-- a sparsity profile: its JSON file (scripts/profile.lua writes one) or the table itself
function KINDS.profile(v)
  if (type(v) == "string" and v ~= "") or (type(v) == "table" and type(v.layers) == "table") then return nil end
  return ("needs a profile.json path (scripts/profile.lua writes one), got %s"):format(show(v))
end

-- "bimamba" | "bilstm" or a spec table {name =, heads =, expand =, d_state =, ...}: the keys
-- each mixer takes (nn/mixers.lua), so that a misspelt size is not silently the default
local MIXER_KEYS = {
  bimamba = { name = true, heads = true, expand = true, d_state = true, d_conv = true, dt_rank = true, dt_min = true,
              dt_max = true, seed = true },
  bilstm = { name = true, heads = true, seed = true },
}
function KINDS.mixer(v)
  local name = type(v) == "string" and v or (is_object(v) and v.name)
  local keys = type(name) == "string" and MIXER_KEYS[name:lower()]
  if not keys then
    return ("needs bimamba, bilstm or a spec {\"name\": \"bimamba\", \"expand\": 1, ...}, got %s"):format(
      type(name) == "string" and show(name) or show(v))
  end
  if type(v) == "table" then
    for k, x in pairs(v) do
      if not keys[k] then
        local names = util.sorted_keys(keys)
        return ("has an unknown key '%s' (a %s takes %s)"):format(tostring(k), name:lower(), table.concat(names, ", "))
      end
      if k ~= "name" and k ~= "dt_min" and k ~= "dt_max" and not posint(x) then
        return ("needs %s, got %s"):format(posint_want(x), show(x)), "." .. k
      end
      if (k == "dt_min" or k == "dt_max") and not (finite(x) and x > 0) then
        return ("needs a finite number > 0, got %s"):format(show(x)), "." .. k
      end
    end
  end
end

-- uniform | groupwise:shallow|middle|deep | layer_aware[:k] | sparsest[:k] (k >= 1; its upper
-- bound, the depth, is checked where the model is known: strategies.lua)
function KINDS.strategy(v)
  local want = "uniform | groupwise:shallow|middle|deep | layer_aware[:k] | sparsest[:k] (k a positive integer)"
  if type(v) ~= "string" then return ("needs %s, got %s"):format(want, show(v)) end
  local base, arg = require("attnlab.s2s.strategies").parse(v)
  local ok = base == "uniform" or (base == "groupwise" and (arg == "shallow" or arg == "middle" or arg == "deep"))
    or ((base == "layer_aware" or base == "sparsest") and arg >= 1)
  if not ok then return ("needs %s, got %s"):format(want, show(v)) end
end

-- A halting config as H.config reads it (its own checks: keys, numbers, ranges). `also`:
-- the other values the key takes (true: the defaults / the file's; false: none).
local function halting(also)
  return function(v)
    if also and (v == true or v == false) then return nil end
    if not is_object(v) then
      return ("needs %s, got %s"):format(also and "true, false or a JSON object" or "a JSON object like '{\"gate_center\":20}'",
        show(v))
    end
    local ok, err = pcall(require("attnlab.s2s.halting").config, v)
    if not ok then return util.error_text(err, "halting") end
  end
end
KINDS.halting = halting(false)
KINDS.halting_or_bool = halting(true)

-- lists of names, as a JSON list ('["shallow","deep"]': a comma list of words stays one string)
local function names_of(...)
  local set, names = {}, { ... }
  for _, n in ipairs(names) do set[n] = true end
  local want = ("a JSON list of %s like '[\"%s\"]'"):format(table.concat(names, " | "), names[1])
  return function(v)
    if not is_list(v) then return ("needs %s, got %s"):format(want, show(v)) end
    for i, x in ipairs(v) do
      if not set[x] then return ("needs one of %s, got %s"):format(table.concat(names, ", "), show(x)), ("[%d]"):format(i) end
    end
  end
end
KINDS.groups = names_of("shallow", "middle", "deep")
KINDS.teachers = names_of("dense", "avit")
function KINDS.mixers(v)
  if not is_list(v) then return ("needs a JSON list of mixers like '[\"bilstm\"]', got %s"):format(show(v)) end
  for i, m in ipairs(v) do
    local why, sub = KINDS.mixer(m)
    if why then return why, ("[%d]"):format(i) .. (sub or "") end
  end
end
function KINDS.own_keep_control(v)
  if type(v) == "boolean" or (type(v) == "number" and v > 0 and v <= 1) then return nil end
  return ("needs true, false or a keep rate in (0, 1], got %s"):format(show(v))
end

-- the kinds whose value may be one number for a list of one (K.lists makes it the list)
local LIST_KINDS = { posints = true, seeds = true, layers = true, rates = true }

-- ---- the sections ------------------------------------------------------------------------------
-- A schema: key -> kind name, kind function, or a nested schema (a table with `keys`).
-- `name` names the table in messages; `cross(t)` -> nil | path, why: the rules joining keys.
local function schema(name, keys, cross) return { name = name, keys = keys, cross = cross } end
local function with(base, extra)
  local t = {}
  for k, v in pairs(base) do t[k] = v end
  for k, v in pairs(extra) do t[k] = v end
  return t
end

-- the training keys every fit.run stage shares (run/fit.lua; s2s/init.lua's defaults)
local TRAINING = { epochs = "posint", lr = "posnum", batch_size = "posint", weight_decay = "nonneg",
                   warmup_epochs = "nonneg", min_lr = "nonneg", clip_grad = "nonneg", seed = "posint",
                   dataset = "dataset", heads = "posint", eval_limit = "posint" }
-- keys the pipelines set themselves (paths, limits, the model given): the library takes them,
-- a preset's section does not (there they would be overwritten, a value silently ignored)
local RUN = { teacher = "model", train_limit = "limit", test_limit = "limit", image_size = "posint",
              checkpoint = "path", save = "path", out = "path", progress = "bool", stop_after = "posint" }

-- min_lr at most every stage's lr: the cosine schedule refuses it at the stage's first step
-- (for stage 2: after stage 1 has trained)
local function lr_rule(defaults, stages)
  return function(t)
    local min_lr = t.min_lr or defaults.min_lr
    local function over(lr, path)
      if type(lr) == "number" and type(min_lr) == "number" and min_lr > lr then
        return path, ("is %s, below min_lr %s: the cosine schedule would rise instead of decay"):format(
          util.show(lr), util.show(min_lr))
      end
    end
    local p, why = over(t.lr or defaults.lr, "lr")
    if p then return p, why end
    for _, s in ipairs(stages or {}) do
      local st = t[s]
      if type(st) == "table" and st.lr ~= nil then
        p, why = over(st.lr, s .. ".lr")
        if p then return p, why end
      end
    end
  end
end

local AVIT_DEFAULTS = { lr = 2e-4, min_lr = 1e-6 }             -- s2s.AVIT_DEFAULTS' (init.lua)
local DISTILL_DEFAULTS = { lr = 5e-4, min_lr = 1e-6 }          -- s2s.DISTILL_DEFAULTS'

local AVIT_KEYS = with(TRAINING, { halting = "halting", eval_mode = "mode", keep_rates = "rates", main_keep_rate = "rate" })

local STAGE1 = schema("distill.stage1", { epochs = "posint", lr = "posnum", train = "stage1_train",
  weights = schema("distill.stage1.weights", { mse = "nonneg", halt = "nonneg", ce = "nonneg" }) })
local STAGE2 = schema("distill.stage2", { epochs = "posint", lr = "posnum", keep_rate = "rate", mode = "mode",
  halting = "halting_or_bool", weights = schema("distill.stage2.weights", { ce = "nonneg", mse = "nonneg" }) })
local DISTILL_KEYS = with(TRAINING, { teacher = "model", teacher_halting = "halting_or_bool", layers = "layers",
  strategy = "strategy", profile = "profile", mixer = "mixer", eval_mode = "mode", stage1 = STAGE1, stage2 = STAGE2 })
DISTILL_KEYS.epochs = nil                                       -- the stages have theirs
local function distill_rule(t)
  if t.layers ~= nil and t.strategy ~= nil then
    return "layers", ("and strategy %s both choose the replaced layers: give one"):format(show(t.strategy))
  end
  if type(t.strategy) == "string" and t.strategy:match("^sparsest") and t.profile == nil then
    return "profile", ("is needed by strategy %s, which ranks the layers by a sparsity profile (the profile.json " ..
      "scripts/profile.lua writes)"):format(show(t.strategy))
  end
  return lr_rule(DISTILL_DEFAULTS, { "stage1", "stage2" })(t)
end

local RESOLUTION_KEYS = { model = "model", sizes = "posints", patch = "posint", dim = "posint", depth = "posint",
  heads = "posint", num_classes = "posint", batch = "posint", iters = "posint", keep_rate = "rate", keep_rates = "rates",
  layers = "layers", mixer = "mixer", threads = "posint", schedule_from = "path" }
-- the shape resolution_bench builds without a model file (its defaults: DeiT-Tiny's)
local function resolution_rule(t)
  if t.model ~= nil then return nil end                        -- the file's shape: checked once loaded
  local depth, dim, heads, patch = t.depth or 12, t.dim or 192, t.heads or 3, t.patch or 16
  if dim % heads ~= 0 then return "heads", ("%d does not divide dim %d"):format(heads, dim) end
  local sizes = type(t.sizes) == "number" and { t.sizes } or t.sizes or { 224, 384 }
  for i, s in ipairs(sizes) do
    if s % patch ~= 0 then
      return "sizes", ("[%d] = %d is not a multiple of the patch size %d"):format(i, s, patch)
    end
  end
  local kr = t.keep_rates
  if type(kr) == "number" then kr = { kr } end
  if type(kr) == "table" and #kr ~= depth then
    return "keep_rates", ("needs one keep rate per layer (%d), got %d"):format(depth, #kr)
  end
  local layers = type(t.layers) == "number" and { t.layers } or t.layers
  for i, l in ipairs(layers or {}) do
    if l > depth then return "layers", ("[%d] = %d is not a layer of a depth-%d model"):format(i, l, depth) end
  end
end

local PROFILE_KEYS = { split = "split", limit = "posint", batch_size = "posint", topk = "posints" }

-- The teacher: trained by al.train (init a scheme, "timm" or "torch", or absent: al.train's
-- keys, checked by al.train.config) or fine-tuned from a timm checkpoint (init a path).
local FINETUNE_KEYS = with(TRAINING, { init = "path", image_size = "posint", pos_resample = "pos_resample",
  num_classes = "posint", label_smoothing = "smoothing", train_limit = "limit", test_limit = "limit" })
local function is_scheme(init) return init == nil or init == "timm" or init == "torch" end
local function train_keys()
  local t = al.train
  local keys = { init = "path", save = "path", image_size = "posint" }
  for k in pairs(t.DEFAULTS) do keys[k] = keys[k] or TRAINING[k] or RUN[k] or FINETUNE_KEYS[k] or true end
  for k in pairs(t.OPTIONAL_KEYS) do keys[k] = keys[k] or TRAINING[k] or RUN[k] or FINETUNE_KEYS[k] or true end
  keys.dataset = true                                          -- al.train's own list (no synthetic)
  keys.normalizer = true
  return keys
end
-- al.train.config's verdict on a scheme teacher, as path, why
local function train_rule(t)
  if not is_scheme(t.init) then return nil end
  local tc = {}
  for k, v in pairs(t) do tc[k] = v end
  tc.save, tc.image_size = nil, nil                            -- s2s.train_teacher's own keys
  local ok, err = pcall(al.train.config, tc)
  if ok then return nil end
  local msg = util.error_text(err, "train")
  local key, rest = msg:match("^([%w_]+) (must be .*)$")
  if key then return key, rest end
  key = msg:match("^unknown config key '([%w_]+)'")
  if key then return key, "is not a key of al.train's config (scripts/train.lua --help lists them)" end
  return nil, msg
end

local SCHEMAS = {}
SCHEMAS.avit = schema("avit", AVIT_KEYS, lr_rule(AVIT_DEFAULTS))
SCHEMAS.avit_config = schema("s2s.avit", with(AVIT_KEYS, RUN), lr_rule(AVIT_DEFAULTS))
SCHEMAS.distill = schema("distill", DISTILL_KEYS, distill_rule)
SCHEMAS.distill_config = schema("s2s.distill", with(DISTILL_KEYS, with(RUN, { student = "model" })), distill_rule)
SCHEMAS.resolution = schema("resolution", RESOLUTION_KEYS, resolution_rule)
SCHEMAS.resolution_config = schema("resolution_bench", with(RESOLUTION_KEYS, { out = "path", progress = "bool" }),
  resolution_rule)
SCHEMAS.profile = schema("profile", PROFILE_KEYS)
SCHEMAS.groupwise = schema("groupwise", { groups = "groups", teachers = "teachers", control = "bool" })
SCHEMAS.keeprate = schema("keeprate", { strategy = "strategy", own_keep_control = "own_keep_control" })
SCHEMAS.layeraware = schema("layeraware", { k = "posints", sparsest = "bool", uniform = "bool", control = "bool",
  mixers = "mixers" })
SCHEMAS.latency = schema("latency", { images = "posint", repeats = "posint" })
SCHEMAS.finetune = schema("teacher", with(FINETUNE_KEYS, { save = "path", out = "path", checkpoint = "path",
  progress = "bool" }), lr_rule({ lr = 1e-4, min_lr = 1e-6 }))   -- s2s.train_teacher's fine-tuning defaults

-- the teacher section: which keys depends on init (a scheme or a checkpoint path)
local function teacher_schema(t)
  if type(t) == "table" and not is_scheme(t.init) then return SCHEMAS.finetune end
  return schema("teacher", train_keys(), train_rule)
end
SCHEMAS.teacher = teacher_schema
SCHEMAS.teacher_config = teacher_schema

-- a preset's top level (the sections above, and the keys the study reads)
SCHEMAS.preset = schema("preset", { name = "name", out = "folder", dataset = "dataset", train_limit = "limit",
  test_limit = "limit", seeds = "seeds", teacher = teacher_schema, profile = SCHEMAS.profile, avit = SCHEMAS.avit,
  distill = SCHEMAS.distill, resolution = SCHEMAS.resolution, groupwise = SCHEMAS.groupwise,
  keeprate = SCHEMAS.keeprate, layeraware = SCHEMAS.layeraware, latency = SCHEMAS.latency, quick = "table" })
K.SCHEMAS = SCHEMAS

-- ---- checking ----------------------------------------------------------------------------------
-- K.check(schema, t [, opts]) -> nil, or path, why: the first bad key (in key order) of t.
-- schema: a name of K.SCHEMAS or a schema. opts.partial: only the keys t has (no joining
-- rules); opts.only: a set of the top-level keys to check (the others are not looked at).
function K.check(sch, t, opts)
  opts = opts or {}
  if type(sch) == "string" then sch = assert(SCHEMAS[sch], "s2s.check: unknown schema " .. sch) end
  local function walk(s, v, prefix, top)
    s = type(s) == "function" and s(v) or s
    if type(v) ~= "table" or getmetatable(v) ~= nil then
      return prefix ~= "" and prefix:sub(1, -2) or s.name, ("needs a table of %s settings, got %s"):format(s.name, show(v))
    end
    for _, k in ipairs(util.sorted_keys(v)) do
      if not (top and opts.only and not opts.only[k]) then
        local spec = s.keys[k]
        local path = prefix .. tostring(k)
        if spec == nil then
          local names = util.sorted_keys(s.keys)
          return path, ("is not a key of %s (known: %s)"):format(s.name == "preset" and "a preset" or ("the " .. s.name .. " section"),
            table.concat(names, ", "))
        end
        local x = v[k]
        if type(spec) == "table" or (type(spec) == "function" and spec == teacher_schema) then
          local p, why = walk(spec, x, path .. ".", false)
          if p or why then return p, why end
        elseif spec ~= true then
          local f = type(spec) == "function" and spec or KINDS[spec]
          local why, sub = f(x)
          if why then return path .. (sub or ""), why end
        end
      end
    end
    if not opts.partial and s.cross then
      local p, why = s.cross(v)
      if p or why then return p and (prefix .. p) or (prefix ~= "" and prefix:sub(1, -2)) or nil, why end
    end
  end
  return walk(sch, t, "", true)
end

-- A preset as its scripts read it (s2s_strategies.lua, distill.lua, profile.lua), checked whole
-- before any work: every key of every section and the rules joining them, so that a misspelt
-- top-level key (teachr = {...}) or a file that is no preset (a sweep's experiment table,
-- {name, datasets, normalizers, seeds, schedule}) is refused, not ignored. One-number lists are
-- made lists first (K.lists). Returns nil, or path, why (K.check's).
function K.preset_problem(preset)
  if type(preset) ~= "table" then return nil, ("a preset must be a table, got %s"):format(type(preset)) end
  K.lists("preset", preset)
  return K.check("preset", preset)
end

-- "path why" as one phrase: "stage2.epochs needs ...", "halting: gate_scale must be ..."
function K.phrase(name, why)
  if not name then return why end
  if why:match("^needs ") or why:match("^is ") or why:match("^must ") or why:match("^has ") or why:match("^and ")
    or why:match("^%[") then
    return name .. (why:match("^%[") and "" or " ") .. why
  end
  return name .. ": " .. why
end

-- The message for a bad command-line value: "--name why"; true (an option given without a
-- value: cli.parse_pairs) where true is not taken is "--name needs a value (what)".
function K.option_message(name, why, value)
  if value == true then
    local want = why:match("^needs (.-)[,;] got ")
    return ("%s needs a value%s"):format(name, want and (" (" .. want .. ")") or "")
  end
  return K.phrase(name, why)
end

-- K.assert(who, schema, t): K.check, raising "who: path why" (no Lua position) when t is bad.
function K.assert(who, sch, t)
  local p, why = K.check(sch, t)
  if p or why then error(who .. ": " .. K.phrase(p, why), 0) end
  return t
end

-- The keys of t whose kind takes one number for a list of one (sizes 224, seeds 3,
-- keep_rates 0.6): made lists, in place, so that the consumers iterate them. Recursive over
-- the nested schemas. Returns t.
function K.lists(sch, t)
  if type(sch) == "string" then sch = SCHEMAS[sch] end
  sch = type(sch) == "function" and sch(t) or sch
  if type(t) ~= "table" or not sch then return t end
  for k, v in pairs(t) do
    local spec = sch.keys[k]
    if type(spec) == "string" and LIST_KINDS[spec] and type(v) == "number" then t[k] = { v }
    elseif type(spec) == "table" or spec == teacher_schema then K.lists(spec, v) end
  end
  return t
end

-- A preset's teacher section under a command line that gives a checkpoint to fine-tune (init a
-- path) where the preset trains its teacher (init a scheme): the preset's keys that describe
-- the model to build (dim, depth, patch, heads, ...) are the checkpoint's in a fine-tune, so they
-- are left out (a copy; its training keys stay), not refused: the preset's recipe is the one
-- the command line replaces. heads is a fine-tune key too (for a checkpoint whose metadata
-- lacks it), but the preset's value describes its own from-scratch model, not the file: only a
-- heads the command line gives is compared with the file's. Any other section is returned as
-- it is.
local SHAPE = { heads = true }        -- fine-tune keys that a scheme teacher's section sets for its own model
function K.teacher_base(section, init)
  if type(section) ~= "table" or not is_scheme(section.init) or is_scheme(init) or type(init) ~= "string" then
    return section
  end
  local t = {}
  for k, v in pairs(section) do
    if (FINETUNE_KEYS[k] or SCHEMAS.finetune.keys[k]) and not SHAPE[k] then t[k] = v end
  end
  return t
end

-- A path's value in a nested table ("stage2.weights.mse"), or nil.
function K.dig(t, path)
  for part in (path:gsub("%[%d+%]", "")):gmatch("[^.]+") do
    if type(t) ~= "table" then return nil end
    t = t[part]
  end
  return t
end

K.finite = finite

-- f(...) for a script, its results returned; an error is raised again (a traceback kept when
-- ATTNLAB_TRACEBACK is set, as cli.protect shows it), with fit's advice for a checkpoint of
-- another configuration naming the script's option that moves it (`option`, e.g. "--out").
function K.with_checkpoint_advice(option, f, ...)
  local tb = (os.getenv("ATTNLAB_TRACEBACK") or "0") ~= "0" and os.getenv("ATTNLAB_TRACEBACK") ~= ""
  local r = table.pack(xpcall(f, function(m) return tb and debug.traceback(tostring(m), 2) or m end, ...))
  if r[1] then return table.unpack(r, 2, r.n) end
  local err = r[2]
  if type(err) == "string" then
    err = err:gsub("(made with a different configuration; remove it) or [^;]*$", "%1 or choose another " .. option)
  end
  error(err, 0)
end
return K
