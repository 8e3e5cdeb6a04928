-- scripts/record_hash.lua -- a SHA-256 of a JSON record's results, for "this change is
-- behaviour-neutral" evidence: two runs of the same fixed-seed command hash the same
-- when every number they computed is bitwise the same.
--
--   bin/attnlab scripts/record_hash.lua RECORD.json [...]      one "<sha256>  <file>" line each
--   bin/attnlab scripts/record_hash.lua --canon RECORD.json    the canonical text that is hashed
--
-- What a rerun legitimately changes is dropped first, at any depth: wall-clock times
-- (started, finished, seconds, step times, throughput, the S2S experiments' ms, ms_repeats,
-- ms_seeds, img_per_s, measured speedups and load averages), the machine and git revision,
-- and outputs (out, checkpoint, save, saved, record; saved_file, the fingerprint of the model
-- a step saved, whose weights the record's numbers already stand for), and the folders of input files (a
-- dataset or model file's path is its name; its sha256 and size stay; so do the teacher,
-- profile, model and record names the S2S records and experiments give), so runs made from
-- two checkouts into two folders compare. Everything else -- config values, losses,
-- accuracies, keep rates, support densities, learned alphas, sparsity profiles, data- and
-- model-file hashes -- is written with sorted keys and every number at 17 significant
-- digits, so a one-ulp difference changes the hash.
local al = require "attnlab"
local cli = al.cli

local DROP = {
  started = true, finished = true, seconds = true, git_revision = true, machine = true,
  step_times = true, train_s_per_step = true, train_img_per_s = true, infer_s_per_example = true,
  s_per_example = true, s_per_example_masked = true, dense_s_per_example = true,
  teacher_s_per_example = true, out = true, checkpoint = true, save = true, saved = true, saved_file = true, record = true,
  ms = true, ms_repeats = true, ms_seeds = true, img_per_s = true, speedup_measured = true,
  loadavg_before = true, loadavg_after = true,
}
-- string values (or lists of them) that are file paths of inputs: the file's name is kept,
-- its folder (which follows the checkout, e.g. dataset.files[i].path =
-- "<root>/../shared/data/...", or an experiment's "results/s2s/<preset>/teacher.safetensors")
-- is not
local PATH_KEYS = { teacher = true, profile = true, init = true, path = true, model = true, avit_record = true,
                    schedule_from = true, records = true }
local function base_name(x) return type(x) == "string" and x:match("[^/]+$") or x end

local function canon(v, out)
  local t = type(v)
  if t == "table" then
    if #v > 0 or next(v) == nil then
      out[#out + 1] = "["
      for i, x in ipairs(v) do
        if i > 1 then out[#out + 1] = "," end
        canon(x, out)
      end
      out[#out + 1] = "]"
      return
    end
    local keys = {}
    for k, x in pairs(v) do
      if not DROP[k] then keys[#keys + 1] = k end
    end
    table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
    out[#out + 1] = "{"
    for i, k in ipairs(keys) do
      if i > 1 then out[#out + 1] = "," end
      out[#out + 1] = ("%q:"):format(tostring(k))
      local x = v[k]
      if PATH_KEYS[k] and type(x) == "string" then
        x = base_name(x)
      elseif PATH_KEYS[k] and type(x) == "table" and #x > 0 then
        local names = {}
        for i, y in ipairs(x) do names[i] = base_name(y) end
        x = names
      end
      canon(x, out)
    end
    out[#out + 1] = "}"
  elseif t == "number" then
    out[#out + 1] = math.type(v) == "integer" and tostring(v) or ("%.17g"):format(v)
  elseif t == "string" then
    out[#out + 1] = ("%q"):format(v)
  elseif v == al.json.null then
    out[#out + 1] = "null"
  else
    out[#out + 1] = tostring(v)
  end
end

-- The first non-finite number in v, as a dotted path; nil when none (al.json.decode refuses 1e999,
-- which was inf, and has no NaN: a guard should the record come from elsewhere).
-- A hash over "inf" would call two different overflowed runs the same result.
local function non_finite(v, where)
  if type(v) == "number" then
    if v ~= v or v == math.huge or v == -math.huge then return where end
  elseif type(v) == "table" then
    for k, x in pairs(v) do
      local w = non_finite(x, where == "" and tostring(k) or (where .. "." .. tostring(k)))
      if w then return w end
    end
  end
end

-- A record is what train.lua, sweep.lua and distill.lua write: an object with a config object
-- and a result (test_accuracy, or a sweep's error); a bench record's or an S2S experiment's
-- rows (or, for experiment 1 over several seeds, its tables); or a sparsity profile
-- (profile.lua, the S2S study: a layers list of per-layer objects and the token count).
-- Anything else ('[1,2]', '{}', '{"config":5}') would hash without complaint, and the hash
-- would mean nothing.
local function check_record(path, rec)
  if type(rec) ~= "table" or (next(rec) ~= nil and #rec > 0) then
    error(("%s: not a record (a JSON object), got %s"):format(path, type(rec) == "table" and "a JSON array" or al.json.encode(rec)), 0)
  end
  local run = type(rec.config) == "table" and #rec.config == 0
              and (type(rec.test_accuracy) == "number" or rec.error ~= nil)
  local function list_of_objects(v) return type(v) == "table" and #v > 0 and type(v[1]) == "table" end
  local bench = list_of_objects(rec.rows) or list_of_objects(rec.tables)
  local profile = list_of_objects(rec.layers) and math.type(rec.tokens) == "integer"
  if not run and not bench and not profile then
    error(("%s: not a record: want an object with a config object and test_accuracy (train.lua, sweep.lua, " ..
           "distill.lua), a rows list (distill.lua bench, an S2S experiment) or a sparsity profile (layers and " ..
           "tokens: profile.lua)"):format(path), 0)
  end
  local w = non_finite(rec, "")
  if w then error(("%s: %s is not a finite number"):format(path, w), 0) end
end

local function canonical(path)
  local f = io.open(path, "rb")
  if not f then error(("no such file: %s"):format(path), 0) end
  local s = f:read("a")
  f:close()
  if not s then error(("%s: cannot be read (a folder?)"):format(path), 0) end
  local rec, why = require("attnlab.util").decode_json(s)
  if why then error(("%s: not JSON: %s"):format(path, why), 0) end
  check_record(path, rec)
  local out = {}
  canon(rec, out)
  return table.concat(out)
end

local SPEC = {
  name = "record_hash.lua",
  usage = "bin/attnlab scripts/record_hash.lua [--canon] RECORD.json [...]",
  about = "A SHA-256 of each JSON record with timings, machine, git revision and output paths left out.",
  options = { { "canon", nil, "print the canonical text that is hashed instead of its hash" } },
  positional = { { "RECORD", "a JSON record (train.lua, sweep.lua, distill.lua, an S2S experiment or profile)" } },
  positional_required = 1,
  rest = true,
  examples = { "bin/attnlab scripts/record_hash.lua results/run.json" },
}

cli.run(SPEC, arg, function(opts, files)
  for _, path in ipairs(files) do
    local text = canonical(path)
    if opts.canon then
      print(text)
    else
      local tmp = os.tmpname()
      local f = assert(io.open(tmp, "wb"))
      f:write(text)
      f:close()
      local p = assert(io.popen("sha256sum < " .. require("attnlab.util").shquote(tmp)))   -- (every path to sh quoted)
      local h = p:read("a"):match("^(%x+)")
      p:close()
      os.remove(tmp)
      print(("%s  %s"):format(h, path))
    end
  end
end)
