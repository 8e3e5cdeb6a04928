-- Seed sweeps (lua/attnlab/sweep/init.lua, scripts/sweep.lua): experiment checking, command lines,
-- a tiny real sweep on Fashion-MNIST (2 normalizers x 2 seeds, 500 images, 1 epoch) in a temp
-- folder, rerun = no-op, a sweep killed mid-way resumes to the same records with no duplicate,
-- a failing run leaves an error record while the others finish (and is retried), a changed
-- config is refused, the Slurm files; and, with ATTNLAB_SLURM_TEST=1 (as root), the real
-- one-node Slurm test tests/slurm/run_slurm_test.sh.
local al = require "attnlab"
local T = require "harness"

local sweep = al.sweep
local q = sweep.shquote
local sh = T.sh
local read = T.read_file
local write = T.write_file
local function exists(path) return read(path) ~= nil end

-- Kill a process group we started (by its leader's pid) and wait until the leader is gone.
local function kill_group(pid)
  if not pid then return end
  pid = tostring(pid):match("%d+")
  sh("kill -KILL -" .. pid)        -- dash's kill: no "--" before a negative pid
  local t0 = al.clock()
  while al.clock() - t0 < 10 do
    local st = read("/proc/" .. pid .. "/stat")
    if not st or st:match("%) (%a)") == "Z" then return end
    sh("sleep 0.05")
  end
end

-- Start `sh -c INNER` in a session of its own, as a killed sweep's worker left running would
-- be, and return its pid once its /proc cmdline is that shell's and names `needle` (the run's
-- record path). The sweep finds such a worker by that cmdline, and right after the spawn it is
-- briefly empty (setsid and sh are still exec'ing): a sweep started then would not see it.
local function stand_in_worker(inner, needle)
  local pid = sh(("setsid sh -c %s >/dev/null 2>&1 </dev/null & echo $!"):format(q(inner))):match("%d+")
  local t0 = al.clock()
  while al.clock() - t0 < 30 do
    local cmdline = read("/proc/" .. pid .. "/cmdline")
    if cmdline and cmdline:find("^sh%z%-c%z") and cmdline:find(needle, 1, true) then return pid end
    sh("sleep 0.01")
  end
  error("the stand-in worker " .. pid .. " never showed its command line")
end

local TMP = {}   -- the folders made, removed by the last case
local function tmpdir() return T.tmpdir("sweep", TMP) end

local function have_fmnist()
  return pcall(al.data.find, "fashion-mnist", { "fashion-mnist/train-images-idx3-ubyte.gz", "fashion-mnist/train-images-idx3-ubyte" })
end

local HOST = sweep.host()

-- the tiny experiment of the real sweeps, written to a file as users do
local function tiny_experiment(dir, normalizers, extra)
  local path = dir .. "/tiny.lua"
  write(path, ([[return {
  name = "tiny", datasets = { "fashion_mnist" }, normalizers = { %s }, seeds = { 1, 2 },
  schedule = { epochs = 1, batch_size = 100, train_limit = 500, test_limit = 300 %s },
}
]]):format('"' .. table.concat(normalizers, '", "') .. '"', extra or ""))
  return path
end

-- The tiny run (500 training images, 5 steps, 300 test images) reaches 0.27-0.36 test accuracy
-- (softmax and topk:0.25, seeds 1-8, measured at 123b5ea); chance is 0.1, and its standard
-- deviation on 300 images ~0.017, so 0.2 fails a run that learned nothing and leaves margin.
local TINY_MIN_ACC = 0.2

local NAMES = { "fashion_mnist__softmax__seed1", "fashion_mnist__topk-0.25__seed1",
                "fashion_mnist__softmax__seed2", "fashion_mnist__topk-0.25__seed2" }

local function records(dir)
  local out = {}
  for _, n in ipairs(NAMES) do
    local s = read(dir .. "/" .. n .. ".json")
    out[n] = s and al.json.decode(s)
  end
  return out
end

-- the result fields of two records agree bit for bit (timings and dates excluded)
local function same_results(a, b, what)
  for _, k in ipairs({ "test_accuracy", "support", "support_density", "support_density_real", "params" }) do
    T.eq(a[k], b[k], 0, what .. "." .. k)
    if type(a[k]) == "number" then
      assert(("%a"):format(a[k]) == ("%a"):format(b[k]), what .. "." .. k .. " differs in its bits")
    end
  end
  T.eq(#a.epochs, #b.epochs, 0, what .. " epochs")
  for e = 1, #a.epochs do T.eq(a.epochs[e].loss, b.epochs[e].loss, 0, what .. " loss of epoch " .. e) end
end

local function json_files(dir)
  local out = sh("ls -1 " .. q(dir))
  local n, tmp = 0, 0
  for f in out:gmatch("[^\n]+") do
    if f:match("%.json$") and f ~= "experiment.json" then n = n + 1 end
    if f:match("%.tmp%.") then tmp = tmp + 1 end
  end
  return n, tmp
end

local A_DIR     -- the reference sweep's folder, made by the first real-sweep case

-- A stand-in for scripts/train.lua as a sweep's entry (opts.entry), for the cases that test the
-- sweep's bookkeeping rather than training: it reads the --key value command line as train.lua
-- does, runs `extra` (Lua, with the config `cfg` in scope: a sleep, a check), and writes the
-- finished record train.lua would (fake_record's). Returns its path.
local function stub_entry(dir, extra)
  local path = dir .. "/stub_train.lua"
  write(path, ([[
local al = require "attnlab"
local cfg = {}
for i = 1, #arg, 2 do
  local v = arg[i + 1]
  if v == "true" then v = true elseif v == "false" then v = false else v = math.tointeger(tonumber(v)) or tonumber(v) or v end
  cfg[arg[i]:match("^%%-%%-(.+)$")] = v
end
%s
local c = al.train.config(cfg)
local eps = {}
for e = 1, c.epochs do eps[e] = { epoch = e, loss = 1.0, test_accuracy = 0.3 } end
assert(al.write_atomic(c.out, al.json.encode({ config = c, epochs = eps, test_accuracy = 0.3, support_density = 1.0,
  params = 1000, tokens = 17 })))
]]):format(extra or ""))
  return path
end

local function nlines(s) return select(2, s:gsub("\n", "")) end

-- A training checkpoint as fit.run writes it (one tensor; state key, stage 1, epoch 1), made under
-- the config whose key is `key`; and the key run/train.lua gives the checkpoint of `run` when its
-- program is `entry` (the key of the config its command line resolves to, as the sweep computes it).
local function fake_checkpoint(path, key)
  al.save(path, { ["model.w"] = al.zeros({ 2 }) },
    { state = al.json.encode({ key = key, stage = 1, epoch = 1, sched_t = 5, history = {} }) })
end
local function checkpoint_key_of(run, entry)
  return al.train.config_key(al.train.config((sweep.parse_command(sweep.command(run, HOST, entry)))))
end

-- A finished record of `run` as train.lua writes it (its resolved config, config.epochs epochs);
-- mutate(rec) makes it corrupt or degenerate (or returns the file's text). Returns the path written.
local function fake_record(run, mutate)
  local c = al.train.config(run.config)
  local eps = {}
  for e = 1, c.epochs do eps[e] = { epoch = e, loss = 1.0, test_accuracy = 0.3 } end
  local rec = { config = c, epochs = eps, test_accuracy = 0.3, support_density = 1.0, params = 1000, tokens = 17 }
  if mutate then rec = mutate(rec) or rec end   -- (a string returned: the file's text)
  write(run.out, type(rec) == "table" and al.json.encode(rec) or rec)
  return run.out
end

-- The ways a record file can be no valid record (lua/attnlab/report/record.lua), each with the
-- start of the reason the sweep gives.
local BAD_RECORDS = {
  { function(r) r.epochs = {} end, "epochs is an empty list" },
  { function(r) r.config.epochs = 0 end, "config.epochs is 0, want a positive integer" },
  { function(r) r.config.normalizer = "zzz" end, "config.normalizer: unknown normalizer 'zzz'" },
  { function(r) r.epochs[2] = { epoch = 2, loss = 1.0, test_accuracy = 0.3 } end, "epochs has 2 entries but config.epochs is 1" },
  { function(r) r.test_accuracy = 2 end, "test_accuracy 2 is not in [0, 1]" },
  { function(r) r.epochs[1].loss = "x" end, "epochs[1].loss is 'x', want a finite number" },
  { function(r) return al.json.encode(r):sub(1, 60) end, "not JSON (truncated?): " },
}

-- The set-up of the checkpoint cases: a tiny softmax experiment (two seeds), its results folder
-- <dir>/r (absolute, with ckpt/), a stub entry and the runs. Returns dir, exp_path, exp, out, stub, runs.
local function checkpoint_fixture()
  local dir = tmpdir()
  local exp_path = tiny_experiment(dir, { "softmax" })
  local exp = sweep.load(exp_path)
  local out = sweep.abspath(dir .. "/r")
  sh("mkdir -p " .. q(out .. "/ckpt"))
  return dir, exp_path, exp, out, stub_entry(dir), sweep.runs(exp, { out = out })
end

local cases = {
  -- ---- experiments and names (no training) ----------------------------------------------------
  { "sanitize ':' in names", sweep.sanitize, { "topk:0.25" }, "topk-0.25" },
  { "record name", sweep.record_name, { "newsgroups20_masked", "entmax:1.25", 7 }, "newsgroups20_masked__entmax-1.25__seed7" },
  { name = "init is a config key like any other: a record without it was made with timm's init", fn = function()
    local dir = tmpdir()
    local c = al.train.config({ dataset = "fashion_mnist", epochs = 2 })
    local function record(cfg)
      local path = dir .. "/r.json"
      write(path, al.json.encode({ config = cfg, test_accuracy = 0.5, epochs = { { epoch = 1, loss = 1.0, test_accuracy = 0.4 },
        { epoch = 2, loss = 0.9, test_accuracy = 0.5 } } }))
      return path
    end
    local legacy = {}
    for k, v in pairs(c) do legacy[k] = v end
    legacy.init, legacy.embed_std, legacy.decay_all = nil, nil, nil      -- written before the keys existed
    local out = record(legacy)
    T.eq((sweep.state({ out = out, config = { dataset = "fashion_mnist", epochs = 2, init = "timm" } })), "done")
    local st, _, why = sweep.state({ out = out, config = { dataset = "fashion_mnist", epochs = 2 } })
    T.eq({ st, why }, { "changed", "init: record has timm, experiment has torch" })
    out = record(c)                                                        -- a record of today's default
    T.eq((sweep.state({ out = out, config = { dataset = "fashion_mnist", epochs = 2 } })), "done")
    st, _, why = sweep.state({ out = out, config = { dataset = "fashion_mnist", epochs = 2, decay_all = true } })
    T.eq({ st, why }, { "changed", "decay_all: record has false, experiment has true" })
    -- the command line a sweep writes carries the key to scripts/train.lua
    local cmd = sweep.command({ config = { dataset = "fashion_mnist", normalizer = "softmax", seed = 1, init = "timm",
                                           decay_all = true, out = dir .. "/x.json" } }, "bin/attnlab")
    assert(cmd:find("--init timm", 1, true) and cmd:find("--decay_all true", 1, true), cmd)
    local back = sweep.parse_command(cmd)
    T.eq({ back.init, back.decay_all }, { "timm", true })
  end },
  { name = "experiment errors name the field", fn = function()
    local base = function() return { datasets = { "fashion_mnist" }, normalizers = { "softmax" }, seeds = { 1 } } end
    local e = base(); e.normalizers = nil
    T.raises(function() sweep.validate(e) end, "'normalizers' must be a non-empty list")
    e = base(); e.seeds = { 1, 1.5 }
    T.raises(function() sweep.validate(e) end, "seeds[2] = 1.5, want an integer")
    e = base(); e.schedule = { epoch = 3 }
    T.raises(function() sweep.validate(e) end, "unknown key 'epoch'")
    e = base(); e.schedule = { seed = 3 }
    T.raises(function() sweep.validate(e) end, "sets 'seed', which the sweep sets per run")
    e = base(); e.normalizers = { "softmax", "softmax" }
    T.raises(function() sweep.validate(e) end, "normalizer 'softmax' is listed twice")
    e = base(); e.overrides = { cifar10 = { epochs = 2 } }
    T.raises(function() sweep.validate(e) end, "overrides.cifar10 names no dataset")
    T.raises(function() sweep.load("/nonexistent/exp.lua") end, "not found")
    -- checked at load, before any run starts (issue 21): values a run would fail on
    e = base(); e.normalizers = { "softmax", "bogus" }
    T.raises(function() sweep.validate(e) end, "normalizers[2]: unknown normalizer 'bogus'")
    e = base(); e.normalizers = { "topk:0" }
    T.raises(function() sweep.validate(e) end, "ratio of topk:<ratio> must be in (0, 1]")
    e = base(); e.schedule = { epochs = -1 }
    T.raises(function() sweep.validate(e) end, "dataset fashion_mnist: epochs must be a positive integer, got -1")
    e = base(); e.schedule = { test_limit = 0 }
    T.raises(function() sweep.validate(e) end, "test_limit must be a positive integer")
    e = base(); e.seeds = { 0 }
    T.raises(function() sweep.validate(e) end, "seeds[1] = 0, want a positive integer")
    e = base(); e.datasets = { "mnist" }
    T.raises(function() sweep.validate(e) end, "unknown dataset 'mnist'")
    e = base(); e.overrides = { fashion_mnist = { lr = -1 } }
    T.raises(function() sweep.validate(e) end, "lr must be a finite number >= 0")
    -- a missing experiment names the places looked at, never "experiments//tmp/x.lua.lua"
    local msg = T.raises(function() sweep.load("/tmp/attnlab-no-such-exp.lua") end, "not found")
    assert(not msg:find("experiments//", 1, true) and not msg:find(".lua.lua", 1, true), msg)
    T.raises(function() sweep.resolve(sweep.validate(base()), { quick = true }) end, "has no quick preset")
  end },
  -- refusals that would otherwise run fewer or other runs than the file lists, or refuse a valid one
  { name = "empty or repeated seeds, a non-string normalizer, a name and label that differ: refused; a variant listed first is not a duplicate", fn = function()
    local base = function() return { datasets = { "fashion_mnist" }, normalizers = { "softmax" }, seeds = { 1 } } end
    local e = base(); e.seeds = {}
    T.raises(function() sweep.validate(e, "x.lua") end, "x.lua: 'seeds' must be a non-empty list, got an empty table")
    e = base(); e.seeds = { 1, 2, 1 }
    T.raises(function() sweep.validate(e, "x.lua") end, "x.lua: seed 1 is listed twice")
    e = base(); e.normalizers = { "softmax", 5 }
    T.raises(function() sweep.validate(e, "x.lua") end, "x.lua: normalizers[2] = 5, want a string")
    e = base(); e.datasets = { { name = "a", label = "b", dataset = "fashion_mnist" } }
    T.raises(function() sweep.validate(e, "x.lua") end, "x.lua: datasets[1]: name 'a' and label 'b' differ; give one")
    e = base(); e.datasets = { "fashion_mnist", "fashion_mnist" }
    T.raises(function() sweep.validate(e, "x.lua") end, "x.lua: dataset 'fashion_mnist' is listed twice")
    -- the variant with its own epochs first, the plain dataset second: two different schedules
    e = base(); e.datasets = { { name = "fm_e2", dataset = "fashion_mnist", epochs = 2 }, "fashion_mnist" }
    local runs = sweep.runs(sweep.validate(e), { out = "/tmp/x" })
    T.eq({ #runs, runs[1].config.epochs, runs[2].config.epochs }, { 2, 2, nil })
  end },
  -- experiment.json tells the report which datasets are the study's: a table entry is unless it says study = false
  { name = "experiment.json: a dataset table entry is in the study unless it says study = false", fn = function()
    local dir = tmpdir()
    local exp = sweep.validate({ datasets = { "fashion_mnist", { name = "fm_e2", dataset = "fashion_mnist", epochs = 2 },
      { name = "fm_e3", dataset = "fashion_mnist", epochs = 3, study = false } }, normalizers = { "softmax" }, seeds = { 1 } })
    local path = sweep.write_experiment(exp, sweep.runs(exp, { out = dir }), dir)
    local doc = al.json.decode(read(path))
    local got = {}
    for i, d in ipairs(doc.datasets) do got[i] = { d.name, d.study } end
    T.eq(got, { { "fashion_mnist", true }, { "fm_e2", true }, { "fm_e3", false } })
  end },

  -- ---- input validation: one line naming the file and the field, before any run ----------------
  { name = "every field of an experiment is type-checked (overrides = 5 is a message, not 'for iterator')", fn = function()
    local base = function() return { datasets = { "fashion_mnist" }, normalizers = { "softmax", "topk:0.5" }, seeds = { 1 } } end
    local function bad(key, value, want)
      local e = base(); e[key] = value
      local msg = T.raises(function() sweep.validate(e, "x.lua") end, want)
      assert(msg:find("^sweep: x%.lua: ") and not msg:find("bad argument", 1, true) and not msg:find("\n"), msg)
    end
    bad("overrides", 5, "overrides must be a table of per-dataset schedules ({ cifar10 = { epochs = 20 } }), got number 5")
    bad("overrides", { fashion_mnist = 3 }, "overrides.fashion_mnist must be a table of schedule keys, got number 3")
    bad("schedule", 5, "schedule must be a table of train keys, got number 5")
    bad("families", 5, "families must be a list of")
    bad("families", { 5 }, "families[1] must be a table with a name")
    bad("quick", 5, "quick must be a table of what --quick changes, got number 5")
    bad("quick", { seeds = 5 }, "'quick.seeds' must be a non-empty list, got number 5")
    bad("slurm", 5, "slurm must be a table")
    bad("slurm", { mem = 4 }, "slurm.mem must be a string, got number 4")
    bad("name", 5, "name must be a non-empty string, got number 5")
    bad("description", {}, "description must be a string, got a table")
    bad("baseline", 3, "baseline must be a normalizer name, got number 3")
    bad("normalizers", "softmax", "'normalizers' must be a non-empty list, got string 'softmax'")
    bad("seeds", { 1, "2" }, "seeds[2] = '2', want an integer")
    -- a list with a hole or a named key would run fewer entries than the file lists
    bad("datasets", { "fashion_mnist", [3] = "cifar10" }, "'datasets' must be a non-empty list, got a table that is not a list")
    bad("datasets", { true }, "x.lua: datasets[1] is boolean true, want a name or a table")
    bad("datasets", { { name = "a", dataset = "fashion_mnist", study = "no" } }, "datasets[1]: study must be true or false")
    bad("datasets", { { name = "a", dataset = "fashion_mnist", epoch = 2 } }, "x.lua: datasets[1] (a) has unknown key 'epoch'")
    -- through the script: one line, exit 1, nothing created
    local dir = tmpdir()
    write(dir .. "/ov.lua", 'return { datasets = { "fashion_mnist" }, normalizers = { "softmax" }, seeds = { 1 }, overrides = 5 }')
    local out, rc = sh(("%s scripts/sweep.lua %s --dry-run --out %s"):format(q(HOST), q(dir .. "/ov.lua"), q(dir .. "/r")))
    T.eq(rc, 1, 0, out)
    T.eq(out, ("sweep.lua: %s/ov.lua: overrides must be a table of per-dataset schedules ({ cifar10 = { epochs = 20 } }), " ..
      "got number 5\n"):format(dir), 0, "the message")
    T.eq(sh("ls -A " .. q(dir)), "ov.lua\n", 0, "nothing created")
  end },
  { name = "a baseline or a family naming what the experiment does not run is refused, naming the family and value", fn = function()
    local base = function() return { datasets = { "fashion_mnist", "cifar10" }, normalizers = { "softmax", "topk:0.5", "hae" },
                                     seeds = { 1 } } end
    local e = base(); e.baseline = "foo"
    T.raises(function() sweep.validate(e, "x.lua") end, "x.lua: baseline 'foo' is not one of the normalizers (it runs: softmax, topk:0.5, hae)")
    e = base(); e.normalizers = { "hae", "sparsemax" }     -- the default, softmax, is not run
    T.raises(function() sweep.validate(e) end, "no baseline given and the default, softmax, is not run")
    local function fam(f, want)
      e = base(); e.families = { f }
      T.raises(function() sweep.validate(e, "x.lua") end, want)
    end
    fam({ name = "f", baseline = "entmax15", normalizers = { "hae" } },
      "x.lua: families[1] (f): baseline = 'entmax15' is not a normalizer the experiment runs (it runs: softmax, topk:0.5, hae)")
    fam({ name = "f", normalizers = { "sparsemax" } }, "families[1] (f): normalizers[1] = 'sparsemax' is not a normalizer the experiment runs")
    fam({ name = "f", normalizers = { "topk:.5" } }, "write it as in normalizers: 'topk:0.5'")
    fam({ name = "f", datasets = { "kmnist" } }, "families[1] (f): datasets[1] = 'kmnist' is not a dataset the experiment runs (it runs: fashion_mnist, cifar10)")
    fam({ name = "f", datasets = { "fmnist" } }, "datasets[1] = 'fmnist' is not a dataset the experiment runs")
    fam({ name = "f", normalizers = { "softmax" } }, "normalizers[1] = 'softmax' is the family's baseline (compared with itself)")
    fam({ name = "f", normalizers = { "hae", "hae" } }, "families[1] (f): normalizer 'hae' is listed twice")
    -- the spelt-out defaults are fine, and so is a quick preset that keeps its families true
    e = base(); e.families = { { name = "f", normalizers = "all", datasets = "study" } }
    sweep.validate(e)
    -- a quick preset is checked with the experiment, without --quick: dropping hae leaves a family naming it
    e = base(); e.families = { { name = "f", normalizers = { "hae" } } }; e.quick = { normalizers = { "softmax", "topk:0.5" } }
    T.raises(function() sweep.validate(e, "x.lua") end, "x.lua (quick): families[1] (f): normalizers[1] = 'hae' is not a normalizer")
  end },
  { name = "unknown keys (top level, quick, a family, slurm) are refused with the known keys; a misspelt one gets a hint", fn = function()
    local base = function() return { datasets = { "fashion_mnist" }, normalizers = { "softmax" }, seeds = { 1 } } end
    local e = base(); e.seed = { 1, 2, 3 }
    local msg = T.raises(function() sweep.validate(e, "x.lua") end,
      "x.lua: the experiment table has unknown key 'seed' (did you mean 'seeds'?); the known keys are: baseline, datasets, " ..
      "description, families, name, normalizers, overrides, quick, schedule, seeds, slurm")
    assert(not msg:find("\n"), msg)
    e = base(); e.seeds = nil; e.seed = { 1 }           -- the typo is named, not the missing 'seeds'
    T.raises(function() sweep.validate(e) end, "unknown key 'seed'")
    e = base(); e.quick = { schedul = { epochs = 1 } }
    T.raises(function() sweep.validate(e, "x.lua") end, "x.lua: quick has unknown key 'schedul' (did you mean 'schedule'?); " ..
      "the known keys are: baseline, datasets, families, normalizers, overrides, schedule, seeds")
    e = base(); e.quick = { schedule = { epoch = 1 } }
    T.raises(function() sweep.validate(e, "x.lua") end, "x.lua (quick): schedule has unknown key 'epoch'")
    e = base(); e.families = { { name = "f", normalizer = { "softmax" } } }
    T.raises(function() sweep.validate(e) end, "families[1] (f) has unknown key 'normalizer' (did you mean 'normalizers'?)")
    e = base(); e.slurm = { tiem = "01:00:00" }
    T.raises(function() sweep.validate(e) end, "slurm has unknown key 'tiem' (did you mean 'time'?)")
    -- what sweep.load sets is not the file's to set
    local dir = tmpdir()
    write(dir .. "/f.lua", 'return { datasets = { "fashion_mnist" }, normalizers = { "softmax" }, seeds = { 1 }, file = "y.lua" }')
    T.raises(function() sweep.load(dir .. "/f.lua") end, "f.lua: 'file' is set by the sweep, not by the experiment")
  end },
  { name = "two spellings of one run are refused: topk:0.5 / topk:.5, fashion_mnist / fmnist, a variant that changes nothing", fn = function()
    local base = function() return { datasets = { "fashion_mnist" }, normalizers = { "softmax" }, seeds = { 1 } } end
    local e = base(); e.normalizers = { "softmax", "topk:0.5", "topk:.5" }
    T.raises(function() sweep.validate(e, "x.lua") end,
      "x.lua: normalizers[2] 'topk:0.5' and normalizers[3] 'topk:.5' are the same normalizer; list it once")
    e = base(); e.normalizers = { "softmax", "topk:5e-1", "topk:0.50" }
    T.raises(function() sweep.validate(e) end, "are the same normalizer")
    e = base(); e.datasets = { "fashion_mnist", "fmnist" }
    T.raises(function() sweep.validate(e, "x.lua") end,
      "x.lua: datasets[1] 'fashion_mnist' and datasets[2] 'fmnist' are the same runs (dataset fashion_mnist, same schedule); list it once")
    e = base(); e.datasets = { "newsgroups20", { name = "ng", dataset = "newsgroups" } }
    T.raises(function() sweep.validate(e) end, "datasets[1] 'newsgroups20' and datasets[2] 'ng' are the same runs")
    e = base(); e.datasets = { { name = "a b", dataset = "fashion_mnist" }, { name = "a-b", dataset = "fashion_mnist", epochs = 2 } }
    T.raises(function() sweep.validate(e) end, "datasets[1] 'a b' and datasets[2] 'a-b' would write the same record files")
    -- distinct runs stay accepted: a variant with its own setting, entmax15 next to entmax:1.5 (another kernel)
    e = base(); e.datasets = { "fashion_mnist", { name = "fm_e2", dataset = "fmnist", epochs = 2 } }
    e.normalizers = { "softmax", "entmax15", "entmax:1.5" }
    T.eq(#sweep.runs(sweep.validate(e), { out = "/tmp/x" }), 6)
  end },
  { name = "--quick's overrides of a dataset win over the dataset entry's own keys (else --quick ran the full epochs)", fn = function()
    local e = { name = "t", datasets = { { name = "fm_e2", dataset = "fmnist", epochs = 20 } }, normalizers = { "softmax" },
                seeds = { 1 }, schedule = { epochs = 5 }, quick = { overrides = { fm_e2 = { epochs = 1 } } } }
    local v = sweep.validate(e)
    T.eq(sweep.runs(v, { out = "/tmp/x" })[1].config.epochs, 20, 0, "the entry's own epochs over the schedule's 5 ")
    T.eq(sweep.runs(sweep.resolve(v, { quick = true }), { out = "/tmp/x" })[1].config.epochs, 1, 0, "--quick ")
  end },
  { name = "--task with a file that is not a manifest says so (no 'command line has no --out: {')", fn = function()
    T.raises(function() sweep.run_from_command('{"a": 1}') end,
      'not the command line of a sweep run (no --out DIR/<run>.json): {"a": 1}')
    T.raises(function() sweep.run_from_command("bin/attnlab train.lua --dataset x --out y.txt --normalizer s --seed 1") end,
      "its --out is not a .json path")
    local dir = tmpdir()
    write(dir .. "/good.json", '{"a": 1}\n')
    T.raises(function() sweep.task(dir .. "/good.json", 1) end, dir .. "/good.json is not a sweep manifest (the DIR/manifest.txt " ..
      "sweep.lua --slurm writes, one run per line): line 1 is not the command line of a sweep run")
    local out, rc = sh(("%s scripts/sweep.lua --task %s 1"):format(q(HOST), q(dir .. "/good.json")))
    T.eq(rc, 1, 0, out)
    assert(out:find("^sweep%.lua: .*good%.json is not a sweep manifest") and not out:find("has no --out", 1, true), out)
    T.eq(select(2, out:gsub("\n", "")), 1, 0, "lines: " .. out)
  end },
  { name = "every sweep experiment in experiments/ loads (and its --quick preset resolves)", fn = function()
    local n = 0
    for _, f in ipairs({ "demo", "full", "full_init_timm", "full_kmnist", "full_val_topk", "kmnist", "kmnist_2core", "main",
                         "main_2core" }) do
      local exp = sweep.load("experiments/normalizers/" .. f .. ".lua")
      assert(#sweep.runs(exp, { out = "/tmp/x" }) > 0, f)
      if exp.quick then assert(#sweep.runs(sweep.resolve(exp, { quick = true }), { out = "/tmp/x" }) > 0, f .. " --quick") end
      n = n + 1
    end
    sweep.load("tests/slurm/tiny_experiment.lua")
    T.eq(n, 9)
  end },
  { name = "the study's experiment files load; main has 350 runs, --quick 105; kmnist 70; demo 12", fn = function()
    local main = sweep.load("experiments/normalizers/main.lua")
    T.eq(#sweep.runs(main, { out = "/tmp/x" }), 350)
    T.eq(#sweep.runs(sweep.resolve(main, { quick = true }), { out = "/tmp/x" }), 105)
    local fam = main.families[1]
    T.eq(#fam.normalizers * #fam.datasets, 24, 0, "main's sparse-vs-softmax family")
    local km = sweep.load("experiments/normalizers/kmnist.lua")
    T.eq(#sweep.runs(km, { out = "/tmp/x" }), 70)
    T.eq(#km.families[1].normalizers, 6, 0, "kmnist family")
    T.eq(#sweep.runs(sweep.load("experiments/normalizers/demo.lua"), { out = "/tmp/x" }), 12)
    -- seed-major order, the masked variant carries its padding, quick merges the schedule
    local runs = sweep.runs(sweep.resolve(main, { quick = true }), { out = "/tmp/x", only = "masked" })
    T.eq(#runs, 21)
    T.eq({ runs[1].seed, runs[8].seed, runs[1].config.padding, runs[1].config.epochs, runs[1].config.batch_size },
         { 1, 2, "masked", 1, 128 })
  end },
  { name = "command line: thread env, typed --key value, round trip through parse_command", fn = function()
    local exp = sweep.validate({ name = "x", datasets = { { name = "nm", dataset = "newsgroups20", padding = "masked" } },
      normalizers = { "topk:0.25" }, seeds = { 3 }, schedule = { lr = 0.001, warmup_epochs = 0.5, epochs = 2, progress = false } })
    local r = sweep.runs(exp, { out = "/tmp/some dir", threads = 2 })[1]
    local cmd = sweep.command(r, "/opt/my host/attnlab")
    print("# " .. cmd)
    assert(cmd:find("^OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=2 ATTNLAB_NUM_THREADS=2 '/opt/my host/attnlab' "), cmd)
    assert(cmd:find("--dataset newsgroups20 --normalizer topk:0.25 --seed 3 ", 1, true), cmd)
    assert(cmd:find("--out '/tmp/some dir/nm__topk-0.25__seed3.json'", 1, true), cmd)
    local cfg, env, host = sweep.parse_command(cmd)
    T.eq(host, "/opt/my host/attnlab")
    T.eq(env.OMP_NUM_THREADS, "2")
    for k, v in pairs(r.config) do T.eq(cfg[k], v, 0, "config." .. k) end
    T.eq(math.type(cfg.epochs), "integer")
    local run = sweep.run_from_command(cmd)
    T.eq({ run.name, run.label, run.dir }, { "nm__topk-0.25__seed3", "nm", "/tmp/some dir" })
  end },

  -- the command line is what the run trains with: a value that needs 16 or 17 digits must come
  -- back exactly (0.1 + 0.2 is 0.30000000000000004, not the 0.3 of 15 digits), and a whole float
  -- is an integer there as train.lua's option parser reads it (1.0 -> 1: the checkpoint key the
  -- sweep expects is the one train.lua computes, and 1 and 1.0 give two keys)
  { name = "command line: 16- and 17-digit values round trip exactly; a whole float reads back as train.lua's integer", fn = function()
    local cfg = { dataset = "fashion_mnist", normalizer = "softmax", seed = 1, lr = 0.1 + 0.2, weight_decay = 1 / 3,
                  min_lr = 2 ^ -30 * 3, warmup_epochs = 1.0, out = "/tmp/x/r.json" }
    local cmd = sweep.command({ config = cfg }, "h", "e")
    print("# " .. cmd)
    for _, part in ipairs({ "--lr 0.30000000000000004 ", "--weight_decay 0.3333333333333333 ",
                            "--min_lr 2.7939677238464355e-09 ", "--warmup_epochs 1.0 " }) do
      T.truthy(cmd:find(part, 1, true), "no '" .. part .. "' in " .. cmd)
    end
    local back = sweep.parse_command(cmd)
    T.eq(string.format("%a %a %a", back.lr, back.weight_decay, back.min_lr),
      string.format("%a %a %a", 0.30000000000000004, 0.3333333333333333, 2.7939677238464355e-09))
    T.eq({ math.type(back.warmup_epochs), back.warmup_epochs }, { "integer", 1 })
    T.eq({ math.type(back.seed), math.type(back.lr) }, { "integer", "float" })
    -- a config without threads runs one thread per process, as sweep.runs gives by default
    assert(cmd:find("^OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 ATTNLAB_NUM_THREADS=1 h e "), cmd)
    local exp = sweep.validate({ datasets = { "fashion_mnist" }, normalizers = { "softmax" }, seeds = { 1 } })
    T.eq(sweep.runs(exp, { out = "/tmp/x" })[1].config.threads, 1)
  end },

  -- ---- corrupt and degenerate records: never finished, said in one line (no training) ----------
  { name = "a record file that is no valid record is not finished: state 'invalid' with why; the sweep says so and runs it", fn = function()
    local dir = tmpdir()
    local exp = sweep.load(tiny_experiment(dir, { "softmax" }))
    local out = dir .. "/r"
    sh("mkdir -p " .. q(out))
    local runs = sweep.runs(exp, { out = out })
    fake_record(runs[1])
    T.eq((sweep.state(runs[1])), "done", 0, "the valid record")
    local function check(mutate, want)
      local path = fake_record(runs[2], mutate)
      local st, rec, why = sweep.state(runs[2])
      T.eq({ st, rec }, { "invalid", nil }, 0, want)
      assert(why:find(want, 1, true), want .. ": " .. why)
      local lines = {}
      local s = sweep.run(exp, { out = out, dry_run = true, log = function(l) lines[#lines + 1] = l end })
      T.eq({ s.done_before, s.total }, { 1, 2 }, 0, want)
      T.eq(lines[1], ("%s: record %s is not a valid record (%s); a real run would run it again"):format(runs[2].name, path, why))
      assert(lines[2]:find("1 finished before, 1 to run", 1, true) and lines[2]:find("1 rerun after an invalid record", 1, true),
        lines[2])
      assert(lines[3]:find("--seed 2 ", 1, true), "the run is not listed to run: " .. table.concat(lines, "\n"))
    end
    for _, b in ipairs(BAD_RECORDS) do check(b[1], b[2]) end
  end },
  { name = "a run that exits 0 with a degenerate record gets an error record saying why; Slurm lists it as pending", fn = function()
    local dir = tmpdir()
    local exp = sweep.load(tiny_experiment(dir, { "softmax" }))
    local out = dir .. "/r"
    sh("mkdir -p " .. q(out .. "/logs"))
    local runs = sweep.runs(exp, { out = out })
    fake_record(runs[1])
    local path = fake_record(runs[2], function(r) r.test_accuracy = 2 end)
    local st, err = sweep.finish(runs[2], 0)
    T.eq(st, "error")
    T.eq(err.error, ("train.lua exited with status 0 but its record %s is not a valid record (test_accuracy 2 is not in [0, 1])")
      :format(path))
    T.eq((sweep.state(runs[2])), "error", 0, "a retried run")
    -- --slurm: the invalid record is pending again, and said so
    fake_record(runs[2], function(r) r.epochs = {} end)
    write(out .. "/experiment.json", "[1")
    local res = sweep.write_slurm(exp, { out = out })
    T.eq({ res.n, res.total, #res.notes }, { 1, 2, 2 })
    T.eq(res.notes[1], ("%s: record %s is not a valid record (epochs is an empty list (no epoch was recorded)); the run runs again")
      :format(runs[2].name, path))
    assert(res.notes[2]:find(out .. "/experiment.json was not JSON (", 1, true), res.notes[2])
    assert(read(out .. "/manifest.txt"):find("--seed 2 ", 1, true), "manifest")
    T.eq(al.json.decode(read(out .. "/experiment.json")).name, "tiny", 0, "experiment.json written anew")
  end },
  { name = "sweep.lua --out '' / a file / a path under a file (also --dry-run), --only '[': one line, nothing written", fn = function()
    local dir = tmpdir()
    local exp = tiny_experiment(dir, { "softmax" })
    local function refused(args, code, want, cwd)
      local out, err, rc = T.run(("%s %s %s %s"):format(q(HOST), q(sweep.root() .. "/scripts/sweep.lua"), q(exp), args), { dir = cwd })
      T.eq(rc, code, 0, args .. ": " .. out .. err)
      assert(err:find("^sweep%.lua: " .. want:gsub("%p", "%%%0")), args .. ": " .. err)
      if code == 1 then T.eq(select(2, err:gsub("\n", "")), 1, 0, "lines: " .. err) end
      assert(not err:find("mkdir:", 1, true) and not err:find("traceback", 1, true), err)
      T.eq(out, "", 0, args)
    end
    local cwd = dir .. "/cwd"
    sh("mkdir -p " .. q(cwd))
    refused("--out ''", 2, "--out needs a folder path, got ''", cwd)
    refused("--out '' --dry-run", 2, "--out needs a folder path, got ''", cwd)
    T.eq(sh("ls -A " .. q(cwd)), "", 0, "records written into the current folder")
    write(dir .. "/afile", "x")
    refused("--out " .. q(dir .. "/afile"), 2, "--out " .. dir .. "/afile exists and is not a folder")
    refused("--out " .. q(dir .. "/afile") .. " --dry-run", 2, "--out " .. dir .. "/afile exists and is not a folder")
    -- a path under a file: refused up front, the dry run too (it listed the runs as invalid records)
    refused("--out " .. q(dir .. "/afile/sub"), 2, "--out " .. dir .. "/afile/sub: cannot create the folder")
    refused("--out " .. q(dir .. "/afile/sub") .. " --dry-run", 2, "--out " .. dir .. "/afile/sub: cannot create the folder")
    refused("--only '[' --dry-run --out " .. q(dir .. "/r"), 2, "--only '[' is not a valid Lua pattern: malformed pattern (missing ']')")
    refused("--only 'seed1,seed%' --dry-run --out " .. q(dir .. "/r"), 2, "--only 'seed%' is not a valid Lua pattern: malformed pattern (ends with '%')")
    T.raises(function() sweep.run(sweep.load(exp), { out = dir .. "/r", only = "[", dry_run = true, log = function() end }) end,
      "--only '[' is not a valid Lua pattern")   -- (the library says it too)
    T.eq(read(dir .. "/afile"), "x")
    T.raises(function() sweep.run(sweep.load(exp), { out = "", dry_run = true, log = function() end }) end,
      "the results folder (--out) must be a non-empty path, got ''")
  end },
  { name = "a sweep refused over a changed record leaves no empty ckpt/ or logs/ behind", fn = function()
    local dir = tmpdir()
    local exp = sweep.load(tiny_experiment(dir, { "softmax" }))
    local out = dir .. "/r"
    sh("mkdir " .. q(out))
    fake_record(sweep.runs(exp, { out = out })[1])
    exp.schedule.epochs = 2
    T.raises(function() sweep.run(exp, { out = out, log = function() end }) end, "epochs: record has 1, experiment has 2")
    T.eq(sh("ls " .. q(out)), NAMES[1] .. ".json\n", 0, "files after the refusal")
  end },
  { name = "--dry-run lists the runs and writes nothing (no folder, no experiment.json)", fn = function()
    local dir = tmpdir()
    local exp = tiny_experiment(dir, { "softmax", "topk:0.25" })
    local out, rc = sh(("%s scripts/sweep.lua %s --dry-run --out %s"):format(q(HOST), q(exp), q(dir .. "/new")))
    T.eq(rc, 0, 0, out)
    assert(out:find("4 to run", 1, true) and out:find("scripts/train.lua --dataset fashion_mnist", 1, true), out)
    T.eq(sh("ls -A " .. q(dir)), "tiny.lua\n", 0, "files after --dry-run")
  end },
  { name = "sweep.lua: a bad experiment is one line before any run (exit 1); usage errors exit 2", fn = function()
    local dir = tmpdir()
    write(dir .. "/bad.lua", 'return { datasets = { "fashion_mnist" }, normalizers = { "softmax", "sparsmax" }, seeds = { 1 } }')
    local out, rc = sh(("%s scripts/sweep.lua %s --out %s"):format(q(HOST), q(dir .. "/bad.lua"), q(dir .. "/r")))
    T.eq(rc, 1, 0, out)
    assert(out:find("^sweep%.lua: .*normalizers%[2%]: unknown normalizer 'sparsmax'"), out)
    T.eq(select(2, out:gsub("\n", "")), 1, 0, "lines: " .. out)
    T.eq(sh("ls -A " .. q(dir)), "bad.lua\n", 0, "nothing created")
    write(dir .. "/raises.lua", 'error("oops")')
    out, rc = sh(("%s scripts/sweep.lua %s"):format(q(HOST), q(dir .. "/raises.lua")))
    T.eq(rc, 1, 0, out)
    assert(out:find("raised: ", 1, true) and out:find("oops", 1, true) and not out:find("traceback"), out)
    out, rc = sh(("%s scripts/sweep.lua %s --wrokers 2"):format(q(HOST), q(dir .. "/bad.lua")))
    T.eq(rc, 2, 0, out)
    assert(out:find("unknown option --wrokers", 1, true) and out:find("usage:", 1, true), out)
  end },

  -- ---- sweeps of a stand-in for train.lua (no training) -----------------------------------------
  { name = "one sweep per folder: a second is refused naming the first's pid; the lock goes on return, error and kill -9", fn = function()
    local dir = tmpdir()
    local exp_path = tiny_experiment(dir, { "softmax" })
    local out = sweep.abspath(dir .. "/r")
    local lockp = out .. "/.state/sweep.lock"
    local stub = stub_entry(dir, "os.execute('sleep 3')")
    local function quiet(o) o.log = function() end; o.entry = stub; return o end
    -- the first sweep, in a process of its own (its own session, as a user's terminal would be)
    write(dir .. "/driver.lua", ("local al = require 'attnlab'\nal.sweep.run(al.sweep.load(%q), { out = %q, workers = 1, entry = %q })\n")
      :format(exp_path, out, stub))
    local pid = sh(("setsid %s %s >%s 2>&1 </dev/null & echo $!"):format(q(HOST), q(dir .. "/driver.lua"), q(dir .. "/driver.log")))
      :match("%d+")
    local t0 = al.clock()
    while not exists(out .. "/.state/" .. NAMES[1] .. ".pid") and al.clock() - t0 < 30 do sh("sleep 0.05") end
    local msg = T.raises(function() sweep.run(sweep.load(exp_path), quiet({ out = out, workers = 1 })) end,
      ("sweep: another sweep is running on %s (pid %s holds %s); wait for it to end, or stop it (kill %s) and run this command again")
      :format(out, pid, lockp, pid))
    T.eq(nlines(msg), 0, 0, msg)
    -- through the CLI: one line, exit 1, before any run is looked at or started
    local o, e, rc = T.run(("%s %s %s --workers 1 --out %s"):format(q(HOST), q(sweep.root() .. "/scripts/sweep.lua"), q(exp_path), q(out)))
    T.eq(rc, 1, 0, o .. e)
    T.eq({ o, nlines(e) }, { "", 1 }, 0, e)
    assert(e:find("^sweep%.lua: another sweep is running on ") and e:find("(pid " .. pid .. " holds", 1, true), e)
    -- the first sweep killed with no chance to release its lock: the next sweep takes it over
    -- (and waits for the run the killed sweep left going)
    kill_group(pid)
    assert(exists(lockp), "the killed sweep's lock file should still be there")
    local s = sweep.run(sweep.load(exp_path), quiet({ out = out, workers = 1 }))
    T.eq({ s.done_before + s.done, s.failed }, { 2, 0 })
    T.eq(exists(lockp), false, 0, "the lock after the sweep returned")
    local exp = sweep.load(exp_path); exp.schedule.epochs = 2     -- refused while it holds the lock
    T.raises(function() sweep.run(exp, quiet({ out = out })) end, "epochs: record has 1, experiment has 2")
    T.eq(exists(lockp), false, 0, "the lock after the sweep raised")
    -- Slurm: writing the array's files is refused like a second sweep; the array's tasks (one
    -- sweep's runs) are not blocked by the lock
    local out2 = sweep.abspath(dir .. "/slurm")
    sh("mkdir -p " .. q(out2 .. "/.state"))
    local held = assert(require("attnlab.lockfile").acquire(out2 .. "/.state/sweep.lock"))
    T.raises(function() sweep.write_slurm(sweep.load(exp_path), { out = out2, entry = stub }) end, "another sweep is running on " .. out2)
    held:release()
    T.eq(sweep.write_slurm(sweep.load(exp_path), { out = out2, entry = stub }).n, 2)
    held = assert(require("attnlab.lockfile").acquire(out2 .. "/.state/sweep.lock"))
    local st = sweep.task(out2 .. "/manifest.txt", 1)
    held:release()
    T.eq(st, "done", 0, "an array task while the folder is locked")
  end },
  { name = "--no-wait: a killed sweep's run still going keeps its worker slot (no more than --workers at once)", fn = function()
    local dir = tmpdir()
    local exp = sweep.load(tiny_experiment(dir, { "softmax", "topk:0.25" }))
    local out = dir .. "/r"
    local going, overlaps = dir .. "/orphan-going", dir .. "/overlaps"
    -- each stand-in run notes whether it started while the orphan was still going
    local stub = stub_entry(dir, ("if io.open(%q) then local f = io.open(%q, 'a') f:write(cfg.out, '\\n') f:close() end")
      :format(going, overlaps))
    local runs = sweep.runs(exp, { out = out })
    sh("mkdir -p " .. q(out .. "/.state"))
    -- what a SIGKILL of the sweep alone leaves: its worker going on (a stand-in: 2 s of sleep that
    -- names the run's record), its pid file in .state/
    write(going, "")
    local pid = stand_in_worker(("sleep 2; rm -f %s; : %s"):format(q(going), q(runs[1].out)), runs[1].out)
    write(out .. "/.state/" .. runs[1].name .. ".pid", pid .. "\n")
    local lines = {}
    local s = sweep.run(exp, { out = out, workers = 1, no_wait = true, entry = stub, log = function(l) lines[#lines + 1] = l end })
    local log = table.concat(lines, "\n")
    kill_group(pid)
    T.eq({ s.ran, s.done, s.failed, s.orphaned }, { 3, 3, 0, { runs[1].name } }, 0, log)
    assert(log:find(runs[1].name .. ": still running from an earlier sweep (pid " .. pid .. "); not started again (it takes a " ..
      "worker slot while it runs)", 1, true), log)
    T.eq(read(overlaps), nil, 0, "runs started next to the orphan with --workers 1")
    T.eq(exists(runs[1].out), false, 0, "the orphan's run is not run again by this sweep")
  end },
  -- the earlier sweep's run was reported as still going (exit 3) though its record had been
  -- written while this sweep ran: what is reported is read when the sweep ends
  { name = "--no-wait: a killed sweep's run that finishes meanwhile is not reported as still going", fn = function()
    local dir = tmpdir()
    local exp = sweep.load(tiny_experiment(dir, { "softmax", "topk:0.25" }))
    local out = dir .. "/r"
    local stub = stub_entry(dir, "os.execute('sleep 0.5')")   -- each of this sweep's runs: 0.5 s
    local runs = sweep.runs(exp, { out = out })
    -- the orphan's own record, made beforehand by the stand-in into another folder
    local src_dir = dir .. "/src"
    T.eq(sweep.run(exp, { out = src_dir, workers = 1, entry = stub, only = "^" .. runs[1].name:gsub("%p", "%%%0") .. "$",
      log = function() end }).done, 1)
    sh("mkdir -p " .. q(out .. "/.state"))
    local src = src_dir .. "/" .. runs[1].name .. ".json"
    local inner = ("sleep 1; cp %s %s.tmp; mv %s.tmp %s"):format(q(src), q(runs[1].out), q(runs[1].out), q(runs[1].out))
    local pid = stand_in_worker(inner, runs[1].out)
    write(out .. "/.state/" .. runs[1].name .. ".pid", pid .. "\n")
    local lines = {}
    local s = sweep.run(exp, { out = out, workers = 1, no_wait = true, entry = stub, log = function(l) lines[#lines + 1] = l end })
    kill_group(pid)
    T.eq({ s.done, s.orphaned }, { 3, {} }, 0, table.concat(lines, "\n"))
    T.eq(read(runs[1].out), read(src), 0, "the earlier sweep's record")
  end },
  { name = "a checkpoint made under another config is refused like a changed record; --redo-changed sets it aside", fn = function()
    local _, exp_path, exp, out, stub, runs = checkpoint_fixture()
    -- seed 1 was killed before the experiment's lr was edited; seed 2 after (its checkpoint fits)
    local old = sweep.load(exp_path); old.schedule.lr = 0.01
    fake_checkpoint(runs[1].checkpoint, checkpoint_key_of(sweep.runs(old, { out = out })[1], stub))
    fake_checkpoint(runs[2].checkpoint, checkpoint_key_of(runs[2], stub))
    local want = ("sweep: 1 checkpoint(s) in %s were made with a different config than the experiment now gives, e.g. %s " ..
      "(its checkpoint %s was made with another config); use a new --out folder, or pass --redo-changed to rerun them " ..
      "(a checkpoint is then set aside and its run starts over)"):format(out, runs[1].name, runs[1].checkpoint)
    T.eq(T.capture_error(sweep.run, exp, { out = out, entry = stub, log = function() end }), want)
    T.eq(T.capture_error(sweep.run, exp, { out = out, entry = stub, dry_run = true, log = function() end }), want)
    local o, e, rc = T.run(("%s %s %s --dry-run --out %s"):format(q(HOST), q(sweep.root() .. "/scripts/sweep.lua"), q(exp_path), q(out)))
    T.eq({ rc, o, e }, { 1, "", "sweep.lua: " .. want:gsub("^sweep: ", "") .. "\n" })
    T.eq(sh("ls " .. q(out .. "/ckpt")), NAMES[1] .. ".ckpt\n" .. NAMES[3] .. ".ckpt\n", 0, "checkpoints after the refusals")
    local lines = {}
    local s = sweep.run(exp, { out = out, entry = stub, workers = 1, redo_changed = true, log = function(l) lines[#lines + 1] = l end })
    local log = table.concat(lines, "\n")
    T.eq({ s.done, s.failed }, { 2, 0 }, 0, log)
    assert(log:find(runs[1].name .. ": checkpoint made with a different config than the experiment now gives; set aside as " ..
      runs[1].checkpoint .. ".changed-", 1, true), log)
    assert(log:find("1 resumed from a checkpoint, 1 rerun after a config change", 1, true), log)
    assert(sh("ls " .. q(out .. "/ckpt")):find("^" .. NAMES[1]:gsub("%p", "%%%0") .. "%.ckpt%.changed%-%d+T%d+Z\n$"), "set aside")
  end },
  { name = "a corrupt checkpoint (a history no record can start with, or one the run's last attempt refused) is set aside, not retried forever", fn = function()
    local _, _, exp, out, stub, runs = checkpoint_fixture()
    -- seed 1: history with epoch numbers [2]; seed 2: a fitting history, but the last attempt's error record says corrupt
    local function ck(path, key, history)
      al.save(path, { ["model.w"] = al.zeros({ 2 }) },
        { state = al.json.encode({ key = key, stage = 1, epoch = 1, sched_t = 5, history = history }) })
    end
    ck(runs[1].checkpoint, checkpoint_key_of(runs[1], stub), { { epoch = 2, loss = 1.0, test_accuracy = 0.3, lr = 1e-3 } })
    ck(runs[2].checkpoint, checkpoint_key_of(runs[2], stub), { { epoch = 1, loss = 1.0, test_accuracy = 0.3, lr = 1e-3 } })
    write(runs[2].out, al.json.encode({ error = ("checkpoint %s is corrupt (the run resumed from it after epoch 1 would record: " ..
      "test_accuracy 0.2 differs from the last epoch's (epochs[1].test_accuracy = 0.3)); delete it (or move it away) to start " ..
      "this run over; no record written"):format(runs[2].checkpoint), exit_status = 1, attempts = 1 }))
    local lines = {}
    local s = sweep.run(exp, { out = out, entry = stub, workers = 1, log = function(l) lines[#lines + 1] = l end })
    local log = table.concat(lines, "\n")
    T.eq({ s.done, s.failed }, { 2, 0 }, 0, log)
    assert(log:find(runs[1].name .. ": checkpoint corrupt (history[1].epoch is 2, want 1); set aside as " .. runs[1].checkpoint ..
      ".corrupt-", 1, true), log)
    assert(log:find(runs[2].name .. ": checkpoint corrupt (the run's last attempt refused it: ", 1, true), log)
    assert(log:find("2 started over after an unreadable or corrupt checkpoint", 1, true), log)
  end },
  { name = "--slurm: a checkpoint (or record) made under another config is refused as by a local sweep, before the manifest; --redo-changed sets it aside and lists the run", fn = function()
    local _, exp_path, exp, out, stub, runs = checkpoint_fixture()
    -- seed 1 was stopped before the experiment's lr was edited; seed 2 after (its checkpoint fits)
    local old = sweep.load(exp_path); old.schedule.lr = 0.01
    fake_checkpoint(runs[1].checkpoint, checkpoint_key_of(sweep.runs(old, { out = out })[1], stub))
    fake_checkpoint(runs[2].checkpoint, checkpoint_key_of(runs[2], stub))
    local ck2 = read(runs[2].checkpoint)
    local want = ("sweep: 1 checkpoint(s) in %s were made with a different config than the experiment now gives, e.g. %s " ..
      "(its checkpoint %s was made with another config); use a new --out folder, or pass --redo-changed to rerun them " ..
      "(a checkpoint is then set aside and its run starts over)"):format(out, runs[1].name, runs[1].checkpoint)
    T.eq(T.capture_error(sweep.write_slurm, exp, { out = out, entry = stub }), want)
    -- the local sweep says the very same line
    T.eq(T.capture_error(sweep.run, exp, { out = out, entry = stub, dry_run = true, log = function() end }), want)
    -- through the CLI: one line on stderr, exit 1, no manifest nor job array
    local o, e, rc = T.run(("%s %s %s --slurm --out %s"):format(q(HOST), q(sweep.root() .. "/scripts/sweep.lua"), q(exp_path), q(out)))
    T.eq({ rc, o, e }, { 1, "", "sweep.lua: " .. want:gsub("^sweep: ", "") .. "\n" })
    T.eq({ exists(out .. "/manifest.txt"), exists(out .. "/sweep.sbatch") }, { false, false }, 0, "files after the refusals")
    T.eq(sh("ls " .. q(out .. "/ckpt")), NAMES[1] .. ".ckpt\n" .. NAMES[3] .. ".ckpt\n", 0, "checkpoints after the refusals")
    -- --redo-changed: the stale checkpoint set aside (said in a note), the fitting one kept; both runs listed
    local res = sweep.write_slurm(exp, { out = out, entry = stub, redo_changed = true })
    T.eq({ res.n, res.total, #res.notes }, { 2, 2, 1 }, 0, table.concat(res.notes, "\n"))
    local prefix = runs[1].name .. ": checkpoint made with a different config than the experiment now gives; set aside as " ..
      runs[1].checkpoint .. ".changed-"
    T.eq(res.notes[1]:sub(1, #prefix), prefix, 0, "the note")
    local aside = res.notes[1]:match("set aside as (%S+), the run starts over$")
    T.truthy(aside and aside:find("%.changed%-%d+T%d+Z$"), "the note names no set-aside file: " .. res.notes[1])
    T.eq(sh("ls " .. q(out .. "/ckpt")), aside:match("[^/]+$") .. "\n" .. NAMES[3] .. ".ckpt\n", 0, "checkpoints after --redo-changed")
    T.eq({ exists(runs[1].checkpoint), exists(aside), read(runs[2].checkpoint) == ck2 }, { false, true, true })
    T.eq({ (sweep.state(runs[1])), (sweep.state(runs[2])) }, { "pending", "partial" }, 0, "states after --redo-changed")
    local man = read(res.manifest)
    T.eq(nlines(man), 2, 0, man)
    assert(man:find("--seed 1 ", 1, true) and man:find("--seed 2 ", 1, true), man)
    -- a finished record of another config: refused in the same words (naming the run and why; seed 2's
    -- checkpoint, of epochs = 1, is now stale too); with --redo-changed both runs are listed again, the
    -- checkpoint left next to the record dropped and seed 2's set aside
    fake_record(runs[1])
    local changed_exp = sweep.load(exp_path); changed_exp.schedule.epochs = 2
    local changed_runs = sweep.runs(changed_exp, { out = out })
    fake_checkpoint(runs[1].checkpoint, checkpoint_key_of(changed_runs[1], stub))
    T.eq(T.capture_error(sweep.write_slurm, changed_exp, { out = out, entry = stub }),
      ("sweep: 1 finished record(s) and 1 checkpoint(s) in %s were made with a different config than the experiment now gives, " ..
       "e.g. %s (epochs: record has 1, experiment has 2); use a new --out folder, or pass --redo-changed to rerun them " ..
       "(a checkpoint is then set aside and its run starts over)"):format(out, runs[1].name))
    res = sweep.write_slurm(changed_exp, { out = out, entry = stub, redo_changed = true })
    T.eq({ res.n, exists(runs[1].checkpoint), exists(runs[2].checkpoint) }, { 2, false, false }, 0, table.concat(res.notes, "\n"))
    T.eq(#res.notes, 1, 0, table.concat(res.notes, "\n"))
    assert(res.notes[1]:find(runs[2].name .. ": checkpoint made with a different config", 1, true), res.notes[1])
    assert(read(res.manifest):find("--epochs 2 ", 1, true), read(res.manifest))
  end },
  { name = "--slurm: an unreadable checkpoint is set aside (renamed, said in a note) and its run is pending; one that fits is kept and its run resumes", fn = function()
    local _, _, exp, out, stub, runs = checkpoint_fixture()
    write(runs[1].checkpoint, string.pack("<I8", 64) .. '{"model.w": ')   -- truncated
    fake_checkpoint(runs[2].checkpoint, checkpoint_key_of(runs[2], stub))
    local ck2 = read(runs[2].checkpoint)
    T.eq({ (sweep.state(runs[1])), (sweep.state(runs[2])) }, { "partial", "partial" }, 0, "states before")
    local res = sweep.write_slurm(exp, { out = out, entry = stub })
    T.eq({ res.n, res.total, #res.notes }, { 2, 2, 1 }, 0, table.concat(res.notes, "\n"))
    local aside = res.notes[1]:match("^" .. runs[1].name .. ": checkpoint unreadable %(.+%); set aside as (%S+), the run starts over$")
    T.truthy(aside, "the note: " .. res.notes[1])
    T.eq(aside:sub(1, #runs[1].checkpoint + 9), runs[1].checkpoint .. ".corrupt-", 0, "the set-aside name")
    T.eq({ exists(runs[1].checkpoint), exists(aside) }, { false, true }, 0, "the unreadable checkpoint moved")
    T.eq((sweep.state(runs[1])), "pending", 0, "the run of the unreadable checkpoint")
    -- the fitting checkpoint is left as it was, and the manifest line of its run resumes from it
    T.eq({ read(runs[2].checkpoint) == ck2, (sweep.state(runs[2])) }, { true, "partial" }, 0, "the fitting checkpoint")
    local lines = {}
    for l in read(res.manifest):gmatch("[^\n]+") do lines[#lines + 1] = l end
    T.eq(#lines, 2, 0, "manifest lines")
    T.eq(sweep.run_from_command(lines[2]).checkpoint, runs[2].checkpoint, 0, "the checkpoint of manifest line 2")
    T.eq(sweep.run_from_command(lines[1]).checkpoint, runs[1].checkpoint, 0, "the checkpoint of manifest line 1")
    -- nothing left to set aside: a second write_slurm says nothing and lists the same runs
    local again = sweep.write_slurm(exp, { out = out, entry = stub })
    T.eq({ again.n, #again.notes }, { 2, 0 }, 0, table.concat(again.notes, "\n"))
  end },
  { name = "--slurm --dry-run writes nothing and sets nothing aside (it lists the manifest's lines and what it would set aside); a misspelt write_slurm option and local-only CLI options are refused", fn = function()
    local _, exp_path, exp, out, stub, runs = checkpoint_fixture()
    fake_record(runs[1])
    write(runs[2].checkpoint, "garbage")   -- unreadable
    local before = sh("cd " .. q(out) .. " && find . | sort")
    local res = sweep.write_slurm(exp, { out = out, entry = stub, dry_run = true })
    T.eq({ res.n, res.total, #res.commands, res.dry_run }, { 1, 2, 1, true })
    T.eq(sweep.run_from_command(res.commands[1]).name, runs[2].name)
    T.eq(#res.notes, 1, 0, table.concat(res.notes, "\n"))
    assert(res.notes[1]:find(runs[2].name .. ": checkpoint " .. runs[2].checkpoint .. ": unreadable", 1, true) and
           res.notes[1]:find("a real run sets it aside", 1, true), res.notes[1])
    T.eq(sh("cd " .. q(out) .. " && find . | sort"), before, 0, "the folder is as it was")
    T.eq(read(runs[2].checkpoint), "garbage", 0, "the checkpoint stays")
    -- through the CLI: the lines, exit 0, still nothing written
    local o, e, rc = T.run(("%s %s %s --slurm --dry-run --out %s"):format(q(HOST), q(sweep.root() .. "/scripts/sweep.lua"),
      q(exp_path), q(out)))
    T.eq(rc, 0, 0, o .. e)
    assert(o:find("(dry run, nothing written): 1 of 2 runs pending", 1, true) and o:find(runs[2].name, 1, true), o)
    T.eq(sh("cd " .. q(out) .. " && find . | sort"), before, 0, "the folder is as it was (CLI)")
    -- options: a misspelt one is refused naming it; the local sweep's own do not go with --slurm
    T.raises(function() sweep.write_slurm(exp, { out = out, cpus_per_tsk = 4 }) end,
      "sweep.write_slurm: unknown option 'cpus_per_tsk' (known: ")
    for _, c in ipairs({ { "--workers 2", "--workers does not go with --slurm (--max-parallel K limits the tasks at once)" },
                         { "--threads 2", "--threads does not go with --slurm (--cpus-per-task T sets each task's threads)" },
                         { "--no-wait", "--no-wait does not go with --slurm" },
                         { "--dry-run --submit", "--dry-run writes no job array for --submit to submit" } }) do
      o, e, rc = T.run(("%s %s %s --slurm %s --out %s"):format(q(HOST), q(sweep.root() .. "/scripts/sweep.lua"), q(exp_path),
        c[1], q(out)))
      T.eq({ rc, o }, { 2, "" }, 0, c[1] .. ": " .. e)
      assert(e:match("^[^\n]*"):find("sweep.lua: " .. c[2], 1, true), e)   -- the first line names it (then the usage)
    end
    T.eq(sh("cd " .. q(out) .. " && find . | sort"), before, 0, "the folder is as it was (refused options)")
  end },
  { name = "--slurm: a refusal changes nothing (an unreadable checkpoint of another run is not set aside by a call that refuses)", fn = function()
    local _, _, exp, out, stub, runs = checkpoint_fixture()
    write(runs[1].checkpoint, "garbage")                          -- unreadable
    fake_checkpoint(runs[2].checkpoint, "{another=config}")       -- made under another config
    local before = sh("cd " .. q(out) .. " && find ckpt | sort")
    T.raises(function() sweep.write_slurm(exp, { out = out, entry = stub }) end,
      "sweep: 1 checkpoint(s) in " .. out .. " were made with a different config")
    T.eq(sh("cd " .. q(out) .. " && find ckpt | sort"), before, 0, "the checkpoints are as they were")
    T.eq(read(out .. "/manifest.txt"), nil, 0, "no manifest")
    T.eq(read(runs[1].checkpoint), "garbage", 0, "the unreadable checkpoint stays where it was")
    -- with --redo-changed both are set aside, each said in a note
    local res = sweep.write_slurm(exp, { out = out, entry = stub, redo_changed = true })
    T.eq({ res.n, #res.notes, exists(runs[1].checkpoint), exists(runs[2].checkpoint) }, { 2, 2, false, false }, 0,
      table.concat(res.notes, "\n"))
  end },
  { name = "--only: spaces around patterns are ignored; a pattern matching no run is refused (topk:0.25 -> topk%-0.25)", fn = function()
    local dir = tmpdir()
    local exp_path = tiny_experiment(dir, { "softmax", "topk:0.25" })
    local exp = sweep.load(exp_path)
    T.eq(#sweep.runs(exp, { out = dir, only = " softmax , seed2$ " }), 3)
    T.eq(#sweep.runs(exp, { out = dir, only = "softmax, ,topk%-0.25" }), 4, 0, "an empty pattern is no pattern")
    -- only empty patterns: no pattern at all, said (not "matches --only " with nothing after it)
    for _, only in ipairs({ "", " , " }) do
      T.raises(function() sweep.runs(exp, { out = dir, only = only }) end,
        "sweep: --only needs a Lua pattern matched against record names (such as fashion_mnist__softmax__seed1), got " ..
        (only == "" and "''" or "' , '"))
    end
    T.raises(function() sweep.runs(exp, { out = dir, only = "softmax,topk:0.25" }) end,
      "sweep: --only 'topk:0.25' matches no run of 'tiny': record names spell ':' as '-' ('%-' in a pattern), try 'topk%-0.25' " ..
      "(it matches fashion_mnist__topk-0.25__seed1)")
    T.raises(function() sweep.runs(exp, { out = dir, only = "seed1$, sofmax" }) end,
      "sweep: --only 'sofmax' matches no run of 'tiny' (record names look like fashion_mnist__softmax__seed1)")
    -- through the CLI: one line, a usage error (exit 2), nothing written
    local o, e, rc = T.run(("%s %s %s --only 'softmax,topk:0.25' --out %s"):format(q(HOST), q(sweep.root() .. "/scripts/sweep.lua"),
      q(exp_path), q(dir .. "/r")))
    T.eq({ rc, o }, { 2, "" }, 0, e)   -- (the line, then the usage line, as every usage error)
    assert(e:find("^sweep%.lua: %-%-only 'topk:0%.25' matches no run"), e)
    T.eq(select(2, sh("test -e " .. q(dir .. "/r"))), 1, 0, "the results folder was created")
  end },
  { name = "from outside the checkout: sweep.lua experiments/... finds the checkout's file; bin/attnlab on an experiment names a command that works there", fn = function()
    local dir = tmpdir()
    local o, e, rc = T.run(("%s %s experiments/normalizers/demo.lua --dry-run --out r"):format(q(HOST),
      q(sweep.root() .. "/scripts/sweep.lua")), { dir = dir })
    T.eq(rc, 0, 0, o .. e)
    assert(o:find("^sweep normalizers%-demo: 12 runs"), o)
    -- the host on a file that only describes a sweep: the command it prints runs from here
    tiny_experiment(dir, { "softmax" })
    o, e, rc = T.run(q(HOST) .. " tiny.lua", { dir = dir })
    T.eq({ rc, o, nlines(e) }, { 1, "", 1 }, 0, e)
    local cmd = e:match("run it with: (.-) %(%-%-dry%-run lists its runs%)\n$")
    assert(cmd and cmd:find("^/") and cmd:find(" tiny%.lua$"), e)
    o, e, rc = T.run(cmd .. " --dry-run --out r", { dir = dir })
    T.eq(rc, 0, 0, cmd .. ": " .. o .. e)
    assert(o:find("^sweep tiny: 2 runs"), o)
  end },

  -- ---- real sweeps ------------------------------------------------------------------------------
  { name = "tiny real sweep through scripts/sweep.lua: 2 normalizers x 2 seeds, 2 workers", fn = function()
    if not have_fmnist() then T.skip("Fashion-MNIST not found (apt-get install dataset-fashion-mnist)") end
    local dir = tmpdir()
    local exp = tiny_experiment(dir, { "softmax", "topk:0.25" })
    A_DIR = dir .. "/a"
    local out, rc = sh(("%s scripts/sweep.lua %s --workers 2 --out %s"):format(q(HOST), q(exp), q(A_DIR)))
    print("# " .. out:gsub("\n", "\n# "))
    T.eq(rc, 0, 0, "exit status")
    assert(out:find("[4/4]", 1, true) and out:find("ETA", 1, true), "no progress line with ETA")
    local recs = records(A_DIR)
    for _, n in ipairs(NAMES) do
      local r = T.truthy(recs[n], n .. ".json missing")
      assert(type(r.test_accuracy) == "number" and r.test_accuracy > TINY_MIN_ACC,
        n .. ": test accuracy " .. tostring(r.test_accuracy) .. ", want > " .. TINY_MIN_ACC)
      T.eq(r.config.threads, 1, 0, n .. " threads")
    end
    assert(recs[NAMES[2]].support_density < 0.5, "topk:0.25 should be sparse")
    local n = select(2, read(A_DIR .. "/commands.txt"):gsub("scripts/train%.lua", ""))
    T.eq(n, 4, 0, "command lines in commands.txt")
    T.eq(json_files(A_DIR), 4, 0, "records")
    T.eq(sh("ls " .. q(A_DIR .. "/ckpt")), "", 0, "checkpoints removed after success")
  end },
  { name = "rerun: every record is skipped, nothing changes", fn = function()
    if not A_DIR then T.skip("needs the tiny sweep") end
    local before = {}
    for _, n in ipairs(NAMES) do before[n] = read(A_DIR .. "/" .. n .. ".json") end
    local exp = sweep.load(A_DIR .. "/../tiny.lua")
    local s = sweep.run(exp, { out = A_DIR, workers = 2, log = function() end })
    T.eq({ s.ran, s.done_before, s.total }, { 0, 4, 4 })
    for _, n in ipairs(NAMES) do T.eq(read(A_DIR .. "/" .. n .. ".json"), before[n], 0, n) end
  end },
  { name = "killed sweep resumes: --only half, a truncated record, stale temp and pid files", fn = function()
    if not A_DIR then T.skip("needs the tiny sweep") end
    local dir = A_DIR .. "/../b"
    local exp = sweep.load(A_DIR .. "/../tiny.lua")
    local s = sweep.run(exp, { out = dir, workers = 2, only = "seed1$", log = function() end })
    T.eq({ s.ran, s.done }, { 2, 2 })
    -- what a kill leaves behind: a half-written record (had the write not been atomic), the
    -- temporary of an atomic write, the pid file of a worker that is gone
    sh("mkdir -p " .. q(dir .. "/.state"))
    write(dir .. "/" .. NAMES[3] .. ".json", '{"config": {"dataset": "fashion_mnist", "normal')
    write(dir .. "/" .. NAMES[4] .. ".json.tmp.Ab12Cd", '{"test_accuracy": 0.1')
    write(dir .. "/.state/" .. NAMES[4] .. ".pid", "999999999\n")
    write(dir .. "/.state/" .. NAMES[3] .. ".rc", "0\n")            -- a status nobody collected
    write(dir .. "/.state/gone__softmax__seed9.pid", "999999998\n") -- a run no longer in the experiment
    local lines = {}
    s = sweep.run(exp, { out = dir, workers = 2, log = function(l) lines[#lines + 1] = l end })
    T.eq({ s.ran, s.done, s.done_before }, { 2, 2, 2 })
    local a, b = records(A_DIR), records(dir)
    for _, n in ipairs(NAMES) do same_results(b[n], a[n], n) end
    local nrec, ntmp = json_files(dir)
    T.eq({ nrec, ntmp }, { 4, 0 }, 0, "records, temporaries")
    T.eq(sh("ls -A " .. q(dir .. "/.state")), "", 0, "stale .state files left")
    print(("# resumed: %s acc %.4f == %.4f"):format(NAMES[3], b[NAMES[3]].test_accuracy, a[NAMES[3]].test_accuracy))
  end },
  { name = "a sweep killed with its workers resumes to the same records", fn = function()
    if not A_DIR then T.skip("needs the tiny sweep") end
    local dir = A_DIR .. "/../c"
    local exp = A_DIR .. "/../tiny.lua"
    -- start the CLI in the background, kill it and its running worker once the first record is there
    local pid = sh(("setsid %s scripts/sweep.lua %s --workers 1 --threads 1 --out %s >%s 2>&1 </dev/null & echo $!")
      :format(q(HOST), q(exp), q(dir), q(A_DIR .. "/../c.log"))):match("%d+")
    local t0 = al.clock()
    while not exists(dir .. "/" .. NAMES[1] .. ".json") and al.clock() - t0 < 30 do sh("sleep 0.1") end
    kill_group(pid)                                          -- the sweep (its own session)
    kill_group(read(dir .. "/.state/" .. NAMES[2] .. ".pid"))  -- the worker running the second run
    local n_before = json_files(dir)
    assert(n_before >= 1 and n_before < 4, ("kill came too late: %d records"):format(n_before))
    local s = sweep.run(sweep.load(exp), { out = dir, workers = 2, log = function() end })
    T.eq(s.done_before + s.done, 4, 0, "records after the resume")
    local a, c = records(A_DIR), records(dir)
    for _, n in ipairs(NAMES) do same_results(c[n], a[n], n) end
    T.eq(json_files(dir), 4, 0, "no duplicate or stray record")
    print(("# killed after %d record(s); the resume ran %d"):format(n_before, s.ran))
  end },
  { name = "a run killed after an epoch resumes from its checkpoint in DIR/ckpt to the same record", fn = function()
    if not have_fmnist() then T.skip("Fashion-MNIST not found") end
    local dir = tmpdir()
    local exp = tiny_experiment(dir, { "hae" }, ", epochs = 3, train_limit = 600")
    local only = "seed1$"
    local ref = sweep.run(sweep.load(exp), { out = dir .. "/ref", workers = 1, only = only, log = function() end })
    T.eq(ref.done, 1)
    local out = dir .. "/killed"
    local name = "fashion_mnist__hae__seed1"
    local pid = sh(("setsid %s scripts/sweep.lua %s --workers 1 --only %s --out %s >%s 2>&1 </dev/null & echo $!")
      :format(q(HOST), q(exp), q(only), q(out), q(dir .. "/killed.log"))):match("%d+")
    local t0 = al.clock()
    while not exists(out .. "/ckpt/" .. name .. ".ckpt") and al.clock() - t0 < 30 do sh("sleep 0.05") end
    kill_group(pid)
    kill_group(read(out .. "/.state/" .. name .. ".pid"))
    assert(not exists(out .. "/" .. name .. ".json"), "the run finished before the kill; nothing to resume")
    local run = sweep.runs(sweep.load(exp), { out = out, only = only })[1]
    T.eq(sweep.state(run), "partial", 0, "state after the kill")
    local lines = {}
    local s = sweep.run(sweep.load(exp), { out = out, workers = 1, only = only, log = function(l) lines[#lines + 1] = l end })
    T.eq(s.done, 1, 0, "resumed run: " .. table.concat(lines, "\n"))
    local a = al.json.decode(read(dir .. "/ref/" .. name .. ".json"))
    local b = al.json.decode(read(out .. "/" .. name .. ".json"))
    assert(b.resumed_from_epoch and b.resumed_from_epoch >= 1, "the record does not say it resumed")
    same_results(b, a, name)
    T.eq(b.alphas, a.alphas, 0, "learned alphas")
    T.eq(exists(out .. "/ckpt/" .. name .. ".ckpt"), false, 0, "checkpoint removed after success")
    print(("# resumed from epoch %d: acc %.4f == %.4f, alpha[1][1] %.6f"):format(b.resumed_from_epoch, b.test_accuracy,
      a.test_accuracy, b.alphas[1][1]))
  end },
  { name = "a failing run (patch 5 on 28x28 images) leaves an error record; the other runs finish; rerun retries it", fn = function()
    if not have_fmnist() then T.skip("Fashion-MNIST not found") end
    local dir = tmpdir()
    -- a value only the model can refuse (28 is not a multiple of 5): the run fails on its own
    write(dir .. "/tiny.lua", [[return {
  name = "tiny", datasets = { "fashion_mnist", { name = "fmnist_p5", dataset = "fashion_mnist", patch = 5 } },
  normalizers = { "softmax" }, seeds = { 1 },
  schedule = { epochs = 1, batch_size = 100, train_limit = 500, test_limit = 300 },
}
]])
    local exp = sweep.load(dir .. "/tiny.lua")
    local s = sweep.run(exp, { out = dir .. "/r", workers = 2, log = function() end })
    T.eq({ s.done, s.failed }, { 1, 1 })
    local err = al.json.decode(read(dir .. "/r/fmnist_p5__softmax__seed1.json"))
    assert(err.error:find("not a multiple of patch_size 5", 1, true), err.error)
    T.eq({ err.config.patch, err.config.seed, err.exit_status, err.attempts }, { 5, 1, 2, 1 })
    assert(err.stderr_tail:find("train.lua", 1, true), "stderr tail: " .. tostring(err.stderr_tail))
    assert(err.command:find("--patch 5", 1, true))
    local ok = al.json.decode(read(dir .. "/r/fashion_mnist__softmax__seed1.json"))
    assert(ok.test_accuracy > TINY_MIN_ACC, "test accuracy " .. tostring(ok.test_accuracy))
    s = sweep.run(exp, { out = dir .. "/r", workers = 2, log = function() end })
    T.eq({ s.ran, s.failed }, { 1, 1 }, 0, "the rerun retries only the error")
    T.eq(al.json.decode(read(dir .. "/r/fmnist_p5__softmax__seed1.json")).attempts, 2)
    -- the CLI reports the failure in its exit status
    local out, rc = sh(("%s scripts/sweep.lua %s --out %s"):format(q(HOST), q(dir .. "/tiny.lua"), q(dir .. "/cli")))
    T.eq(rc, 1, 0, "exit status with a failed run")
    assert(out:find("1 run(s) failed", 1, true), out)
  end },
  { name = "an unreadable checkpoint is set aside (renamed, logged) and its run starts over", fn = function()
    if not A_DIR then T.skip("needs the tiny sweep") end
    local dir = A_DIR .. "/../corrupt"
    local exp = sweep.load(A_DIR .. "/../tiny.lua")
    sh("mkdir -p " .. q(dir .. "/ckpt"))
    write(dir .. "/ckpt/" .. NAMES[1] .. ".ckpt", string.pack("<I8", 64) .. '{"model.w": ')   -- truncated
    local lines = {}
    local s = sweep.run(exp, { out = dir, workers = 1, only = "^" .. NAMES[1] .. "$", log = function(l) lines[#lines + 1] = l end })
    local log = table.concat(lines, "\n")
    T.eq({ s.done, s.failed }, { 1, 0 }, 0, log)
    assert(log:find("checkpoint unreadable", 1, true) and log:find("set aside as", 1, true), log)
    local aside = sh("ls " .. q(dir .. "/ckpt"))
    assert(aside:find(NAMES[1] .. ".ckpt.corrupt-", 1, true), "not set aside: " .. aside)
    same_results(records(dir)[NAMES[1]], records(A_DIR)[NAMES[1]], NAMES[1])
    -- train.lua alone says what to do
    write(dir .. "/bad.ckpt", "garbage")
    local out, rc = sh(("%s scripts/train.lua --dataset fashion_mnist --epochs 1 --train_limit 100 --test_limit 100 --checkpoint %s")
      :format(q(HOST), q(dir .. "/bad.ckpt")))
    T.eq(rc, 1, 0, out)
    assert(out:find("is unreadable", 1, true) and out:find("delete it", 1, true), out)
  end },
  { name = "runs of a killed sweep still going: the rerun waits for them (or, --no-wait, exits 3 and says so)", fn = function()
    if not A_DIR then T.skip("needs the tiny sweep") end
    local dir = A_DIR .. "/../orphan"
    local exp = sweep.load(A_DIR .. "/../tiny.lua")
    local only = "^" .. NAMES[2]:gsub("%p", "%%%0") .. "$"
    local run = sweep.runs(exp, { out = dir, only = only })[1]
    sh("mkdir -p " .. q(dir .. "/.state"))
    -- what a SIGKILL of the sweep alone leaves: its worker going on, its pid file in .state/
    -- (a stand-in worker: sleeps, then copies the finished record into place, as train.lua would)
    local src = A_DIR .. "/" .. NAMES[2] .. ".json"
    local inner = ("sleep 3; cp %s %s.tmp; mv %s.tmp %s"):format(q(src), q(run.out), q(run.out), q(run.out))
    local pid = stand_in_worker(inner, run.out)
    write(dir .. "/.state/" .. NAMES[2] .. ".pid", pid .. "\n")
    local out, rc = sh(("%s scripts/sweep.lua %s --only %s --no-wait --out %s"):format(q(HOST), q(A_DIR .. "/../tiny.lua"),
      q(only), q(dir)))
    T.eq(rc, 3, 0, out)
    assert(out:find("still going and have no record yet", 1, true), out)
    local lines = {}
    local s = sweep.run(exp, { out = dir, workers = 1, only = only, log = function(l) lines[#lines + 1] = l end })
    local log = table.concat(lines, "\n")
    assert(log:find("waiting for it", 1, true), log)
    T.eq({ s.done, s.failed }, { 1, 0 }, 0, log)
    T.eq(read(run.out), read(src), 0, "the earlier sweep's record is kept")
    -- a stand-in that ends without a record: the run is started again by this sweep
    os.remove(run.out)
    pid = stand_in_worker("sleep 1; : " .. run.out, run.out)
    write(dir .. "/.state/" .. NAMES[2] .. ".pid", pid .. "\n")
    lines = {}
    s = sweep.run(exp, { out = dir, workers = 1, only = only, log = function(l) lines[#lines + 1] = l end })
    log = table.concat(lines, "\n")
    assert(log:find("ended without a record", 1, true), log)
    T.eq({ s.done, s.failed }, { 1, 0 }, 0, log)
    same_results(al.json.decode(read(run.out)), records(A_DIR)[NAMES[2]], NAMES[2])
  end },
  { name = "a changed schedule is refused (use a new folder or --redo-changed)", fn = function()
    if not A_DIR then T.skip("needs the tiny sweep") end
    local exp = sweep.load(A_DIR .. "/../tiny.lua")
    exp.schedule.epochs = 2
    T.raises(function() sweep.run(exp, { out = A_DIR, log = function() end }) end, "epochs: record has 1, experiment has 2")
  end },
  { name = "--slurm files: manifest of the pending runs, job array over it; --task skips finished runs", fn = function()
    if not A_DIR then T.skip("needs the tiny sweep") end
    local dir = A_DIR .. "/../d"
    sh(("mkdir -p %s && cp %s/%s.json %s/%s.json %s/"):format(q(dir), q(A_DIR), NAMES[1], q(A_DIR), NAMES[2], q(dir)))
    local out, rc = sh(("%s scripts/sweep.lua %s --slurm --cpus-per-task 2 --max-parallel 3 --sbatch --partition=cpu --out %s")
      :format(q(HOST), q(A_DIR .. "/../tiny.lua"), q(dir)))
    T.eq(rc, 0, 0, out)
    local man = read(dir .. "/manifest.txt")
    local lines = {}
    for l in man:gmatch("[^\n]+") do lines[#lines + 1] = l end
    T.eq(#lines, 2, 0, "manifest lines")
    assert(lines[1]:find("--seed 2 ", 1, true) and lines[1]:find("--threads 2 ", 1, true), lines[1])
    local sb = read(dir .. "/sweep.sbatch")
    for _, want in ipairs({ "#SBATCH --array=1-2%3\n", "#SBATCH --cpus-per-task=2\n", "#SBATCH --partition=cpu\n",
                            "--task " .. sweep.abspath(dir) .. "/manifest.txt \"$SLURM_ARRAY_TASK_ID\"" }) do
      assert(sb:find(want, 1, true), "sweep.sbatch lacks " .. want .. ":\n" .. sb)
    end
    -- a task whose run is done by now does nothing
    write(dir .. "/m.txt", sweep.command(sweep.runs(sweep.load(A_DIR .. "/../tiny.lua"), { out = dir })[1], HOST) .. "\n")
    out, rc = sh(("%s scripts/sweep.lua --task %s 1"):format(q(HOST), q(dir .. "/m.txt")))
    T.eq(rc, 0, 0, out)
    assert(out:find("record already there; skipped", 1, true), out)
    out, rc = sh(("%s scripts/sweep.lua %s --workers 0"):format(q(HOST), q(A_DIR .. "/../tiny.lua")))
    T.eq(rc, 2, 0, "usage error status: " .. out)
  end },
  { name = "a Slurm task whose checkpoint was made under another config does not resume: train.lua refuses, an error record; the next --slurm refuses it", fn = function()
    if not have_fmnist() then T.skip("Fashion-MNIST not found") end
    local dir = tmpdir()
    local exp_path = tiny_experiment(dir, { "softmax" })
    local exp = sweep.load(exp_path)
    local out = sweep.abspath(dir .. "/r")
    local entry = sweep.root() .. "/scripts/train.lua"
    local only = "seed1$"
    local res = sweep.write_slurm(exp, { out = out, only = only, entry = entry })
    T.eq(res.n, 1)
    -- after the manifest was written, a checkpoint of another config appeared (a local sweep of the
    -- edited experiment, stopped): the task must not train on from it
    local run = sweep.runs(exp, { out = out, only = only })[1]
    local old = sweep.load(exp_path); old.schedule.lr = 0.01
    fake_checkpoint(run.checkpoint, checkpoint_key_of(sweep.runs(old, { out = out, only = only })[1], entry))
    local ck = read(run.checkpoint)
    local st = sweep.task(res.manifest, 1)
    T.eq(st, "error", 0, "the task's state")
    local rec = al.json.decode(read(run.out))
    assert(rec.error:find("checkpoint " .. run.checkpoint .. " was made with a different configuration", 1, true), rec.error)
    T.eq({ rec.exit_status, rec.epochs }, { 1, nil }, 0, "the error record")
    T.eq(read(run.checkpoint) == ck, true, 0, "the checkpoint is left as it was (not resumed from, not set aside)")
    -- the next --slurm says what to do, and --redo-changed sets the checkpoint aside
    local msg = T.capture_error(sweep.write_slurm, exp, { out = out, only = only, entry = entry })
    assert(msg:find("^sweep: 1 checkpoint%(s%) in ") and msg:find("e.g. " .. run.name .. " (its checkpoint", 1, true) and
      msg:find("pass --redo-changed", 1, true), msg)
    res = sweep.write_slurm(exp, { out = out, only = only, entry = entry, redo_changed = true })
    T.eq({ res.n, exists(run.checkpoint), (sweep.state(run)) }, { 1, false, "error" }, 0, table.concat(res.notes, "\n"))
  end },
  { name = "Slurm for real: one-node cluster, job array, records equal the local ones", fn = function()
    if os.getenv("ATTNLAB_SLURM_TEST") ~= "1" then
      T.skip("SKIPPED LOUDLY: the real Slurm test runs only with ATTNLAB_SLURM_TEST=1 (as root): sh tests/slurm/run_slurm_test.sh")
    end
    local out, rc = sh("ATTNLAB_HOST=" .. q(HOST) .. " sh tests/slurm/run_slurm_test.sh")
    -- indent its lines so that tests/run.sh counts this case once
    print("# " .. out:gsub("\n", "\n# "))
    assert(not out:find("\nFAIL: ") and not out:find("^FAIL: "), "the Slurm test failed (see above)")
    if out:find("SKIP: slurm") then T.skip(out:match("SKIP: ([^\n]*)")) end
    T.eq(rc, 0, 0, "run_slurm_test.sh exit status")
  end },
  { name = "(cleanup of the temporary folders)", fn = function()
    for _, d in ipairs(TMP) do T.rm_rf(d) end
  end },
  { name = "threads per run default to cores / workers, at most ATTNLAB_NUM_THREADS when it is set", fn = function()
    T.need_host()
    local prog = "io.write(require('attnlab.sweep').default_threads(4, 1), ' ', require('attnlab.sweep').default_threads(4, 2))"
    local out = T.run_host("-e " .. T.shquote(prog), { env = "ATTNLAB_NUM_THREADS=1" })
    T.eq(out, "1 1")
    out = T.run_host("-e " .. T.shquote(prog), { env = "ATTNLAB_NUM_THREADS=3" })
    T.eq(out, "3 2")
    out = T.run_host("-e " .. T.shquote(prog), { unset = { "ATTNLAB_NUM_THREADS", "LUA_INIT", "LUA_INIT_5_4" } })
    T.eq(out, "4 2")
  end },
}

return cases
