-- attnlab.run.train_cli -- the command line of one classifier training run: the spec (every
-- key of al.train.DEFAULTS as --key value), --config FILE, the resolved recipe printed first,
-- one summary line at the end. scripts/train.lua is this module's main; a library caller (a
-- sweep, a test) can call main(argv) itself.
--
--   require("attnlab.run.train_cli").main({ "--dataset", "fashion_mnist", "--epochs", "1" })
local al = require "attnlab"
local cli = al.cli

local function train_keys()
  local keys = {}
  for k in pairs(al.train.DEFAULTS) do keys[#keys + 1] = k end
  for k in pairs(al.train.OPTIONAL_KEYS) do keys[#keys + 1] = k end
  table.sort(keys)
  return keys
end

-- The spec: --config plus one line per training key (a key added to al.train.DEFAULTS shows
-- up here by itself).
local SPEC = {
  name = "train.lua",
  usage = "bin/attnlab scripts/train.lua --dataset NAME [--normalizer NAME] [--seed K] [--epochs E] " ..
          "[--out FILE] [--save FILE] [--config FILE] [--key value ...]",
  about = "Train the compact ViT classifier once (one dataset, normalizer and seed) and write one JSON record.",
  options = { { "config", "FILE", "a Lua file returning a table of the keys below (command-line keys win)" } },
  examples = { "bin/attnlab scripts/train.lua --dataset fashion_mnist --normalizer entmax15 --epochs 1 " ..
               "--train_limit 2000 --test_limit 1000 --out /tmp/run.json" },
}
for _, k in ipairs(train_keys()) do
  local d = al.train.DEFAULTS[k]
  local text = (al.train.HELP[k] or "") .. (d ~= nil and (" (default %s)"):format(tostring(d)) or "")
  local placeholder = type(d) == "boolean" and "BOOL" or math.type(d) == "integer" and "N" or type(d) == "number"
    and "X" or (k == "out" or k == "checkpoint" or k == "save") and "FILE" or (al.train.OPTIONAL_KEYS[k] and k ~= "threads") and "N"
    or k == "threads" and "N" or "NAME"
  SPEC.options[#SPEC.options + 1] = { k, placeholder, text, type = "auto" }
end

-- --config FILE: a Lua file returning a table of training keys; any failure is one line.
local function load_config(path)
  local chunk, err = loadfile(path)
  if not chunk then
    if not io.open(path, "rb") then cli.die(SPEC, ("--config %s: no such file"):format(path), 2) end
    cli.die(SPEC, ("--config %s: %s"):format(path, err), 2)
  end
  local ok, t = pcall(chunk)
  if not ok then
    -- error({}) printed "table: 0x55...", an address and no reason: such a value is said as what it is
    local mt = getmetatable(t)
    if type(t) == "string" or type(t) == "number" or (type(mt) == "table" and mt.__tostring) then
      cli.die(SPEC, ("--config %s raised an error: %s"):format(path, cli.clean(t)), 2)
    end
    cli.die(SPEC, ("--config %s raised a non-string error (%s)"):format(path, t == nil and "nil" or "a " .. type(t)), 2)
  end
  if type(t) ~= "table" then
    cli.die(SPEC, ("--config %s returned %s, want a table of training keys (return { epochs = 3, ... })")
      :format(path, t == nil and "nothing" or "a " .. type(t)), 2)
  end
  local known = {}
  for _, k in ipairs(train_keys()) do known[k] = true end
  for k in pairs(t) do
    if not known[k] then
      cli.die(SPEC, ("--config %s: unknown key %s (scripts/train.lua --help lists them)"):format(path, cli.show(k)), 2)
    end
  end
  return t
end

local M = { SPEC = SPEC }

-- Parse argv, train, print the summary; exits like every script (2 usage error, 1 failed run).
function M.main(argv)
  if #argv == 0 then
    cli.usage_error(SPEC, "no options given (a run needs at least --dataset; every default would start a 10-epoch run)")
  end
  cli.run(SPEC, argv, M.run_options)
end

-- The run for parsed options (cli.run's main).
function M.run_options(opts)
  local cfg = {}
  for k, v in pairs(opts) do if k ~= "config" then cfg[k] = v end end
  if opts.config then
    for k, v in pairs(load_config(opts.config)) do if cfg[k] == nil then cfg[k] = v end end
  end
  local ok, resolved = pcall(al.train.config, cfg)     -- every key checked before any data is read
  if not ok then cli.die(SPEC, resolved, 2) end
  local bad_patch = al.train.patch_problem(resolved)
  if bad_patch then cli.die(SPEC, bad_patch, 2) end
  local key, path, why = al.train.unwritable_output(resolved)   -- and where the results go
  if key then cli.die(SPEC, ("--%s %s: %s"):format(key, path, why), 2) end
  if resolved.progress then   -- the whole resolved recipe first, so a log says what ran (defaults included)
    local keys = {}
    for k in pairs(resolved) do keys[#keys + 1] = k end
    table.sort(keys)
    local parts = {}
    for _, k in ipairs(keys) do parts[#parts + 1] = k .. "=" .. tostring(resolved[k]) end
    print("recipe: " .. table.concat(parts, " "))
  end
  -- a bad value that shows only once the data is read (a limit above a split's size) is a usage
  -- error like the others (exit 2); any other failure goes on to cli.run's one line (exit 1)
  local tb = os.getenv("ATTNLAB_TRACEBACK")
  local ok, rec = xpcall(al.train.run, function(e)
    if type(e) == "table" and e.usage then return e end
    if tb and tb ~= "" and tb ~= "0" then return debug.traceback(tostring(e), 2) end
    return e
  end, cfg)
  if not ok then
    if type(rec) == "table" and rec.usage then cli.die(SPEC, rec.message, 2) end
    error(rec, 0)
  end
  local speed = rec.train_img_per_s and ("%.1f img/s train%s"):format(rec.train_img_per_s,
    rec.train_timing_includes_warmup and " (incl. warm-up steps)" or "") or "train speed not measured"
  print(("%s %s seed %d: test accuracy %.4f%s, support density %.3f, %s, %.3f ms/example inference%s")
    :format(rec.config.dataset, rec.config.normalizer, rec.config.seed, rec.test_accuracy,
      rec.test_accuracy_exact and (" (exact 1k: %.4f)"):format(rec.test_accuracy_exact) or "",
      rec.support_density, speed, rec.infer_s_per_example * 1e3,
      rec.config.out and (", record " .. rec.config.out) or "") .. (rec.config.save and (", model " .. rec.config.save) or ""))
end

return M
