-- attnlab.report.record -- what a run record must be before anything counts it: the one check
-- every reader of records applies (report.load and so analyze.lua and the experiment table
-- scripts; sweep.read_record and so the sweep's "is this run finished?", its Slurm tasks, and
-- the classifier's parity and summary tables).
--
--   local rec, why, kind = R.read(path)   -- rec, or nil, why and kind: "missing" (no such
--                                         -- file), "unreadable" (cannot be opened, empty, not
--                                         -- JSON) or "invalid" (JSON that is no valid record)
--   local why = R.check(rec)              -- nil for a valid record, else what is wrong
--
-- A record is one of two things:
-- * a finished run, as run/train.lua (or the PyTorch side of the parity runs) writes it: a
--   config object with a dataset name, a normalizer al.nn.Normalizer.parse accepts, a
--   positive integer seed and a positive integer epochs; test_accuracy in [0, 1]; and an
--   epochs list of exactly config.epochs entries, entry i being { epoch = i, loss = <finite>,
--   test_accuracy = <in [0, 1]>, ... }. Every optional field a reader uses is type-checked when
--   present: the accuracies in [0, 1] (test_accuracy_exact, and per epoch train_accuracy,
--   val_accuracy, test_accuracy_exact), densities in [0, 1], timings finite and >= 0, alphas a
--   list of lists of finite numbers, machine / dataset / run objects, tokens and params
--   positive integers, resumed_from_epoch an integer in 0..epochs.
-- * an error record, as sweep.finish writes it for a failed run: a non-empty error message,
--   with config and run objects, attempts and exit_status integers when present.
-- Anything else is refused with one phrase naming the field ("epochs has 3 entries but
-- config.epochs is 5", "test_accuracy 2.5 is not in [0, 1]"), which the readers print after
-- the file's path. Such a record is never a result: the sweep runs it again, a report lists it
-- as invalid (never in a mean, a test or a table), a table script refuses it.
local al = require "attnlab"

local R = {}

local huge = math.huge
local null = al.json.null


-- A value as a message shows it: JSON's spelling where it has one (null), inf and nan as words.
local function shown(v)
  if v == nil then return "missing" end
  if v == null then return "null" end
  if type(v) == "string" then return ("'%s'"):format(#v > 40 and v:sub(1, 37) .. "..." or v) end
  if type(v) == "number" then
    if v ~= v then return "nan" end
    if v == huge then return "inf" elseif v == -huge then return "-inf" end
    return al.json.encode(v)
  end
  if type(v) == "table" then return (#v > 0 or next(v) == nil) and "a list" or "an object" end
  return tostring(v)
end
R.shown = shown

local util = require "attnlab.util"
local is_list, is_object = util.is_list, util.is_object   -- (JSON's list and object)
local finite = util.finite
R.is_list, R.is_object = is_list, is_object

local function is_pos_int(v) return math.type(v) == "integer" and v >= 1 end

-- The checks below return nil when the field is fine, else the phrase for the message.
local function fraction(where, v, required)
  if v == nil and not required then return nil end
  if not finite(v) or v < 0 or v > 1 then return ("%s %s is not in [0, 1]"):format(where, shown(v)) end
end

local function nonneg(where, v)
  if v == nil then return nil end
  if not finite(v) or v < 0 then return ("%s is %s, want a finite number >= 0"):format(where, shown(v)) end
end

local function optional_object(where, v)
  if v ~= nil and not is_object(v) then return ("%s is %s, want an object"):format(where, shown(v)) end
end

local function optional_pos_int(where, v)
  if v ~= nil and not is_pos_int(v) then return ("%s is %s, want a positive integer"):format(where, shown(v)) end
end

-- Why name is not a normalizer of the library (al.nn.Normalizer.parse), or nil.
local function normalizer_problem(name)
  local ok, err = pcall(al.nn.Normalizer.parse, name)
  if ok then return nil end
  return util.error_text(err)
end

-- The per-epoch list: config.epochs entries, entry i of epoch i.
local EPOCH_FRACTIONS = { "train_accuracy", "val_accuracy", "test_accuracy_exact" }
-- (what: the list's name in the messages, "epochs" by default: a checkpoint's history is
-- checked with R.history_problem, entry by entry the same way)
local function epochs_problem(eps, n, what)
  what = what or "epochs"
  if not is_list(eps) then return ("%s is %s, want a list of per-epoch records"):format(what, shown(eps)) end
  if #eps == 0 then return ("%s is an empty list (no epoch was recorded)"):format(what) end
  if #eps ~= n then return ("%s has %d entr%s but config.epochs is %d"):format(what, #eps, #eps == 1 and "y" or "ies", n) end
  for i, e in ipairs(eps) do
    local at = ("%s[%d]"):format(what, i)
    if not is_object(e) then return ("%s is %s, want an object"):format(at, shown(e)) end
    if e.epoch ~= i then return ("%s.epoch is %s, want %d"):format(at, shown(e.epoch), i) end
    if not finite(e.loss) then return ("%s.loss is %s, want a finite number"):format(at, shown(e.loss)) end
    local why = fraction(at .. ".test_accuracy", e.test_accuracy, true)
    for _, k in ipairs(EPOCH_FRACTIONS) do why = why or fraction(at .. "." .. k, e[k]) end
    why = why or nonneg(at .. ".lr", e.lr) or nonneg(at .. ".seconds", e.seconds)
    if why then return why end
  end
end

-- Why a training checkpoint's history (the epochs done so far, which a resumed run copies into
-- its record as they are) could not be the start of a valid record's epochs list, or nil: entry i
-- of epoch i, finite loss, accuracies in [0, 1], lr and seconds >= 0. An empty history is fine.
function R.history_problem(h)
  if type(h) == "table" and next(h) == nil then return nil end
  return epochs_problem(h, type(h) == "table" and #h or 0, "history")
end

local function alphas_problem(a)
  if a == nil then return nil end
  if not is_list(a) then return ("alphas is %s, want a list of layers, each a list of alphas per head"):format(shown(a)) end
  for l, heads in ipairs(a) do
    if not is_list(heads) then return ("alphas[%d] is %s, want a list of alphas per head"):format(l, shown(heads)) end
    for h, v in ipairs(heads) do
      if not finite(v) then return ("alphas[%d][%d] is %s, want a finite number"):format(l, h, shown(v)) end
    end
  end
end

local function support_problem(s)
  if s == nil then return nil end
  if not is_list(s) then return ("support is %s, want a list of per-layer objects"):format(shown(s)) end
  for l, layer in ipairs(s) do
    local at = ("support[%d]"):format(l)
    if not is_object(layer) then return ("%s is %s, want an object"):format(at, shown(layer)) end
    local why = fraction(at .. ".mean_all", layer.mean_all) or fraction(at .. ".mean_real", layer.mean_real)
    if why then return why end
  end
end

local function dataset_problem(d)
  if d == nil then return nil end
  if not is_object(d) then return ("dataset is %s, want an object"):format(shown(d)) end
  for _, k in ipairs({ "train", "test", "val" }) do
    local v = d[k]
    if v ~= nil and not (math.type(v) == "integer" and v >= 0) then
      return ("dataset.%s is %s, want a count of examples"):format(k, shown(v))
    end
  end
end

local function error_record_problem(rec)
  if type(rec.error) ~= "string" or rec.error == "" then
    return ("error is %s, want the failed run's message"):format(shown(rec.error))
  end
  local why = optional_object("config", rec.config) or optional_object("run", rec.run)
  if why then return why end
  for _, k in ipairs({ "run", "config" }) do   -- where the report finds the failed run's dataset label
    local t = rec[k]
    if t and t.dataset ~= nil and type(t.dataset) ~= "string" then
      return ("%s.dataset is %s, want a dataset label"):format(k, shown(t.dataset))
    end
  end
  why = optional_pos_int("attempts", rec.attempts)
  if why then return why end
  if rec.exit_status ~= nil and math.type(rec.exit_status) ~= "integer" then
    return ("exit_status is %s, want an integer"):format(shown(rec.exit_status))
  end
end

-- check(rec) -> nil when rec is a valid finished record or a valid error record, else why.
-- The order puts the fields a reader sees first (config, the accuracy) before the epochs.
function R.check(rec)
  if type(rec) == "table" and next(rec) == nil then return "the file holds an empty object, want a record" end
  if not is_object(rec) then return ("the file holds %s, want a record object"):format(shown(rec)) end
  if rec.error ~= nil then return error_record_problem(rec) end
  local c = rec.config
  if not is_object(c) then return ("config is %s, want an object"):format(shown(c)) end
  if rec.test_accuracy == nil then return "no test_accuracy (not a finished run's record)" end
  local why = fraction("test_accuracy", rec.test_accuracy, true)
  if why then return why end
  if type(c.normalizer) ~= "string" or c.normalizer == "" then return "config.normalizer is missing or not a name" end
  why = normalizer_problem(c.normalizer)
  if why then return "config.normalizer: " .. why end
  if not is_pos_int(c.seed) then return ("config.seed is %s, want a positive integer"):format(shown(c.seed)) end
  if type(c.dataset) ~= "string" or c.dataset == "" then return ("config.dataset is %s, want a dataset name"):format(shown(c.dataset)) end
  if c.padding ~= nil and type(c.padding) ~= "string" then return ("config.padding is %s, want a name"):format(shown(c.padding)) end
  if not is_pos_int(c.epochs) then return ("config.epochs is %s, want a positive integer"):format(shown(c.epochs)) end
  why = epochs_problem(rec.epochs, c.epochs)
      or fraction("test_accuracy_exact", rec.test_accuracy_exact)
      or fraction("support_density", rec.support_density)
      or fraction("support_density_real", rec.support_density_real)
      or nonneg("train_s_per_step", rec.train_s_per_step)
      or nonneg("infer_s_per_example", rec.infer_s_per_example)
      or nonneg("train_img_per_s", rec.train_img_per_s)
      or alphas_problem(rec.alphas) or support_problem(rec.support) or dataset_problem(rec.dataset)
      or optional_object("machine", rec.machine) or optional_object("run", rec.run)
      or optional_pos_int("tokens", rec.tokens) or optional_pos_int("params", rec.params)
  if why then return why end
  if rec.run and rec.run.dataset ~= nil and type(rec.run.dataset) ~= "string" then
    return ("run.dataset is %s, want a dataset label"):format(shown(rec.run.dataset))
  end
  if rec.git_revision ~= nil and type(rec.git_revision) ~= "string" then
    return ("git_revision is %s, want a string"):format(shown(rec.git_revision))
  end
  local r = rec.resumed_from_epoch
  if r ~= nil and not (math.type(r) == "integer" and r >= 0 and r <= c.epochs) then
    return ("resumed_from_epoch is %s, want an integer in 0..%d"):format(shown(r), c.epochs)
  end
  -- The final accuracies come from the same model and test set as the last epoch's evaluation
  -- (run/train.lua), so a finished run's record always has them equal; a difference is an
  -- edited or spliced record, whose headline accuracy no longer is the run's.
  local last = rec.epochs[#rec.epochs]
  for _, k in ipairs({ "test_accuracy", "test_accuracy_exact" }) do
    if rec[k] ~= nil and last[k] ~= nil and math.abs(rec[k] - last[k]) > 1e-9 then
      return ("%s %s differs from the last epoch's (epochs[%d].%s = %s)"):format(k, shown(rec[k]), #rec.epochs, k,
        shown(last[k]))
    end
  end
end

-- ---- a record against the run it should be ---------------------------------------------------
-- Config keys that do not change a run's result.
R.IGNORED_KEYS = { out = true, checkpoint = true, threads = true, progress = true, save = true }

-- Recipe keys added after records were first written, with the value every run made
-- before the key existed used: a record without the key ran with that value (until the
-- init key, al.train always used timm's initialisation).
R.LEGACY_KEYS = { init = "timm", embed_std = 0.02, decay_all = false, beta1 = 0.9, beta2 = 0.999, adam_eps = 1e-8 }

-- The first config key on which a finished record differs from want, the config its run would
-- use now ("lr: record has 0.001, experiment has 0.002"), or nil. Keys missing from want are
-- compared with al.train's defaults; keys missing from the record with R.LEGACY_KEYS. The
-- sweep asks it before counting a record as done, the report before counting it at all.
function R.config_change(rec, want)
  local got = rec.config or {}
  local defaults = al.train.DEFAULTS
  local keys = {}
  for k in pairs(want) do keys[k] = true end
  for k in pairs(got) do keys[k] = true end
  for k in pairs(R.LEGACY_KEYS) do keys[k] = true end
  local sorted = {}
  for k in pairs(keys) do if not R.IGNORED_KEYS[k] then sorted[#sorted + 1] = k end end
  table.sort(sorted)
  for _, k in ipairs(sorted) do
    local a, b = got[k], want[k]
    if a == nil and rec.config then a = R.LEGACY_KEYS[k] end
    if b == nil then b = defaults[k] end
    if k == "patch" and b == nil then b = a end     -- filled in by train from the dataset
    if a ~= b and not (type(a) == "number" and type(b) == "number" and a == b) then
      return ("%s: record has %s, experiment has %s"):format(k, tostring(a), tostring(b))
    end
  end
end

-- read(path) -> rec, or nil, why and kind ("missing" | "unreadable" | "invalid").
function R.read(path)
  local kind = util.not_regular(path)   -- (io.open on a FIFO would wait forever)
  if kind then return nil, ("is %s, not a regular file"):format(kind), "unreadable" end
  local f, err = io.open(path, "rb")
  if not f then
    if tostring(err):match("No such file or directory$") then return nil, "missing", "missing" end
    return nil, ("cannot be opened (%s)"):format(tostring(err):match(": ([^:]*)$") or tostring(err)), "unreadable"
  end
  local txt = f:read("a")
  f:close()
  if not txt then return nil, "cannot be read (a folder?)", "unreadable" end
  if txt:match("^%s*$") then return nil, #txt == 0 and "empty file" or "blank file", "unreadable" end
  local ok, rec = pcall(al.json.decode, txt)
  if not ok then
    return nil, "not JSON (truncated?): " .. util.error_text(rec, "attnlab.json.decode"),
      "unreadable"
  end
  local why = R.check(rec)
  if why then return nil, why, "invalid" end
  return rec
end

return R
