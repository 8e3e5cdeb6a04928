-- Corrupt and degenerate run records (lua/attnlab/report/record.lua) and what every reader does
-- with them: nothing of such a record is counted or reported, and each gets one line naming the
-- file and the problem. Covered here: the check itself (every class of bad record, and every
-- committed study record still valid), report.load / analyze.lua (listed as invalid, never in a
-- table), a malformed experiment.json, folders without any finished record, and the experiment
-- table scripts (val_topk.lua, masking.lua, init_sign.lua, parity_table.lua), on records crafted
-- in temporary folders. The sweep's side (an invalid record is not finished) is in test_sweep.lua.
local al = require "attnlab"
local T = require "harness"

local R = require "attnlab.report.record"
local report = al.report
local q, read, write = T.shquote, T.read_file, T.write_file

local TMP = {}
local function tmpdir() return T.tmpdir("records", TMP) end

-- A finished record as run/train.lua writes it (2 epochs; val_accuracy when val is given).
local function good(o)
  o = o or {}
  local ds, n, seed, acc = o.dataset or "fashion_mnist", o.normalizer or "softmax", o.seed or 1, o.acc or 0.5
  local eps = {}
  for e = 1, 2 do
    eps[e] = { epoch = e, loss = 2.0 / e, lr = 0.001, seconds = 1.5, train_accuracy = 0.4, test_accuracy = e == 2 and acc or 0.3,
               val_accuracy = o.val and (e == 2 and o.val or 0.3) or nil }
  end
  return {
    config = { dataset = o.config_dataset or ds, normalizer = n, seed = seed, epochs = 2, batch_size = 128, lr = 0.001,
               dim = 64, depth = 2, heads = 4, padding = o.padding or "positions", init = "torch", val = o.val and 100 or 0 },
    git_revision = "abc123", machine = { cpu = "test cpu", blas = "none", threads = 1, cores = 2 }, params = 1000, tokens = 17,
    dataset = { name = ds, train = 100, test = 50, val = 0 }, epochs = eps, test_accuracy = acc,
    support = { { mean_all = 1.0, mean_real = 1.0 } }, support_density = 1.0, support_density_real = 1.0,
    train_s_per_step = 0.01, train_img_per_s = 1000.0, infer_s_per_example = 0.001,
    started = "2026-01-01T00:00:00Z", finished = "2026-01-01T00:01:00Z",
  }
end
local function copy(t) return al.json.decode(al.json.encode(t)) end

local function name_of(ds, n, seed) return ("%s__%s__seed%d"):format(ds, al.sweep.sanitize(n), seed) end

-- put(dir, rec [, name]) writes a record as JSON; text given instead of a table is written as is.
local function put(dir, rec, name)
  local txt = type(rec) == "string" and rec or al.json.encode(rec, true)
  name = name or name_of(rec.config.dataset, rec.config.normalizer, rec.config.seed)
  write(dir .. "/" .. name .. ".json", txt)
  return dir .. "/" .. name .. ".json"
end

local function one_line(s, what) T.eq(select(2, s:gsub("\n", "")), 1, 0, (what or "lines") .. ": " .. s) end
local function no_traceback(s) assert(not s:find("traceback", 1, true) and not s:find("attempt to", 1, true), s) end

-- Every class of bad record: { label, mutation of good() or the file's text, the phrase }.
local function with(f) return function() local r = good() f(r) return r end end
local BAD = {
  { "truncated JSON", function() return al.json.encode(good()):sub(1, 120) end, "^not JSON %(truncated%?%): " },
  { "empty file", function() return "" end, "^empty file$" },
  { "a JSON list", function() return "[1, 2]" end, "^the file holds a list, want a record object$" },
  { "an empty object", function() return "{}" end, "^the file holds an empty object, want a record$" },
  { "config not an object", with(function(r) r.config = 5 end), "^config is 5, want an object$" },
  { "no test_accuracy", with(function(r) r.test_accuracy = nil end), "^no test_accuracy" },
  { "test_accuracy a string", with(function(r) r.test_accuracy = "x" end), "^test_accuracy 'x' is not in %[0, 1%]$" },
  { "test_accuracy above 1", with(function(r) r.test_accuracy = 2 end), "^test_accuracy 2 is not in %[0, 1%]$" },
  { "test_accuracy below 0", with(function(r) r.test_accuracy = -0.1 end), "^test_accuracy %-0%.1 is not in %[0, 1%]$" },
  { "test_accuracy inf", function() return (al.json.encode(good()):gsub('"test_accuracy":0%.5', '"test_accuracy":1e999')) end,
    "^not JSON %(truncated%?%): number 1e999 is out of the double range at line 1" },   -- (the decoder refuses it: it was inf)
  { "unknown normalizer", with(function(r) r.config.normalizer = "zzz" end), "^config%.normalizer: unknown normalizer 'zzz'; valid: " },
  { "normalizer missing", with(function(r) r.config.normalizer = nil end), "^config%.normalizer is missing or not a name$" },
  { "seed 1.5", with(function(r) r.config.seed = 1.5 end), "^config%.seed is 1%.5, want a positive integer$" },
  { "config.epochs = 0", with(function(r) r.config.epochs = 0 end), "^config%.epochs is 0, want a positive integer$" },
  { "empty epochs list", with(function(r) r.epochs = {} end), "^epochs is an empty list %(no epoch was recorded%)$" },
  { "no epochs list", with(function(r) r.epochs = nil end), "^epochs is missing, want a list of per%-epoch records$" },
  { "epochs count != config", with(function(r) r.config.epochs = 5 end), "^epochs has 2 entries but config%.epochs is 5$" },
  { "more epochs than config", with(function(r) r.config.epochs = 1 end), "^epochs has 2 entries but config%.epochs is 1$" },
  { "epochs [5]", with(function(r) r.epochs = { 5 } ; r.config.epochs = 1 end), "^epochs%[1%] is 5, want an object$" },
  { "epoch numbers", with(function(r) r.epochs[2].epoch = 7 end), "^epochs%[2%]%.epoch is 7, want 2$" },
  { "loss a string", with(function(r) r.epochs[1].loss = "x" end), "^epochs%[1%]%.loss is 'x', want a finite number$" },
  { "epoch accuracy above 1", with(function(r) r.epochs[1].test_accuracy = 1.5 end), "^epochs%[1%]%.test_accuracy 1%.5 is not in" },
  { "val_accuracy 7.0", with(function(r) r.epochs[2].val_accuracy = 7.0 end), "^epochs%[2%]%.val_accuracy 7%.0 is not in %[0, 1%]$" },
  { "density inf", function() return (al.json.encode(good()):gsub('"support_density":1%.0', '"support_density":1e999')) end,
    "^not JSON %(truncated%?%): number 1e999 is out of the double range at line 1" },
  { "exact accuracy above 1", with(function(r) r.test_accuracy_exact = 1.2 end), "^test_accuracy_exact 1%.2 is not in" },
  { "alphas with a string", with(function(r) r.alphas = { { 1.5, "a" } } end), "^alphas%[1%]%[2%] is 'a', want a finite number$" },
  { "dataset not an object", with(function(r) r.dataset = 5 end), "^dataset is 5, want an object$" },
  { "dataset.train 1.5", with(function(r) r.dataset.train = 1.5 end), "^dataset%.train is 1%.5, want a count of examples$" },
  { "machine a string", with(function(r) r.machine = "x" end), "^machine is 'x', want an object$" },
  { "timing negative", with(function(r) r.train_s_per_step = -1 end), "^train_s_per_step is %-1, want a finite number >= 0$" },
  { "resumed after the end", with(function(r) r.resumed_from_epoch = 3 end), "^resumed_from_epoch is 3, want an integer in 0%.%.2$" },
  { "test_accuracy edited away from the last epoch's", with(function(r) r.test_accuracy = 0.99 end),
    "^test_accuracy 0%.99 differs from the last epoch's %(epochs%[2%]%.test_accuracy = 0%.5%)$" },
  { "test_accuracy_exact edited", with(function(r) r.test_accuracy_exact = 0.7; r.epochs[2].test_accuracy_exact = 0.6 end),
    "^test_accuracy_exact 0%.7 differs from the last epoch's %(epochs%[2%]%.test_accuracy_exact = 0%.6%)$" },
  { "error record without a message", function() return '{"error": 5, "config": {"seed": 1}}' end,
    "^error is 5, want the failed run's message$" },
  { "error record with run a string", function() return '{"error": "boom", "run": "x"}' end, "^run is 'x', want an object$" },
  { "error null", function() return '{"error": null}' end, "^error is null, want the failed run's message$" },
}

local cases = {
  { name = "every committed study record (and experiment.json) under experiments/ is valid", fn = function()
    local n = 0
    local dirs = T.sh("find experiments/classifier/parity experiments/classifier/records experiments/normalizers -name '*.json' " ..
      "-printf '%h\\n' | sort -u")
    for dir in dirs:gmatch("[^\n]+") do
      for f in T.sh("ls " .. q(dir) .. "/*.json"):gmatch("[^\n]+") do
        if not f:match("/experiment%.json$") then
          local rec, why = R.read(f)
          assert(rec, f .. ": " .. tostring(why))
          n = n + 1
        end
      end
      if read(dir .. "/experiment.json") then
        local data = report.load(dir)
        T.eq({ #data.unreadable, #data.errors }, { 0, 0 }, 0, dir)
      end
    end
    assert(n >= 1000, "found only " .. n .. " records")
    print(("# %d committed records accepted"):format(n))
  end },
  { name = "a finished record, an error record, a missing file", fn = function()
    T.eq(R.check(good()), nil)
    T.eq(R.check(good({ val = 0.5, normalizer = "topk:0.25" })), nil)
    T.eq(R.check({ error = "loss became NaN", config = { normalizer = "softmax", seed = 1 }, attempts = 2, exit_status = 1 }), nil)
    local d = tmpdir()
    T.eq({ R.read(d .. "/nope.json") }, { nil, "missing", "missing" })
    local rec = R.read(put(d, good()))
    T.eq(rec.test_accuracy, 0.5)
    T.eq(al.sweep.read_record, R.read, 0, "the sweep reads records through the same check")
  end },
}

for _, b in ipairs(BAD) do
  cases[#cases + 1] = { name = "bad record: " .. b[1] .. " -> one phrase naming the field", fn = function()
    local d = tmpdir()
    local rec = b[2]()
    local path = put(d, rec, "x__softmax__seed1")
    local got, why, kind = R.read(path)
    T.eq(got, nil, 0, b[1] .. " accepted")
    assert(type(why) == "string" and why:find(b[3]) and not why:find("\n"), ("%s: %q does not match %q"):format(b[1], tostring(why), b[3]))
    T.eq(kind, why:find("^not JSON") and "unreadable" or why:find("^empty") and "unreadable" or "invalid")
    -- the report never counts it: listed as invalid with that reason
    local data = report.load(d)
    T.eq({ #data.runs, #data.errors, #data.unreadable }, { 0, 0, 1 }, 0, b[1])
    T.eq(data.unreadable[1].why, why)
  end }
end

cases[#cases + 1] = { name = "analyze.lua: invalid records are named (one line each) and listed, nothing of them is counted", fn = function()
  local d = tmpdir()
  for s = 1, 3 do
    put(d, good({ seed = s, acc = 0.5 + s / 64 }))
    put(d, good({ normalizer = "sparsemax", seed = s, acc = 0.5 + 2 * s / 64 }))
  end
  -- seed 4 of both, each degenerate in its own way; without the check they would pair
  local a = good({ seed = 4, acc = 2 })                                  -- 200 %
  local b = good({ normalizer = "sparsemax", seed = 4 }); b.epochs = {}
  put(d, a); put(d, b)
  local c = good({ seed = 5 }); c.config.epochs = 0; put(d, c)
  local z = good({ seed = 6 }); z.config.normalizer = "zzz"; put(d, z, name_of("fashion_mnist", "softmax", 6))
  put(d, al.json.encode(good({ seed = 7 })):sub(1, 200), name_of("fashion_mnist", "softmax", 7))
  local out, err, code = T.run_host(("scripts/analyze.lua %s --no-plots --out %s"):format(q(d), q(d .. "/R.md")))
  T.eq(code, 0, 0, err)
  local lines = {}
  for l in err:gmatch("[^\n]+") do lines[#lines + 1] = l end
  T.eq(#lines, 5, 0, err)
  for _, want in ipairs({ "fashion_mnist__softmax__seed4.json: test_accuracy 2 is not in [0, 1]",
                          "fashion_mnist__sparsemax__seed4.json: epochs is an empty list",
                          "fashion_mnist__softmax__seed5.json: config.epochs is 0, want a positive integer",
                          "fashion_mnist__softmax__seed6.json: config.normalizer: unknown normalizer 'zzz'",
                          "fashion_mnist__softmax__seed7.json: not JSON (truncated?)" }) do
    assert(err:find("analyze.lua: invalid record " .. d .. "/" .. want, 1, true), "stderr lacks " .. want .. ":\n" .. err)
  end
  no_traceback(err)
  local md = read(d .. "/R.md")
  assert(md:find("6 finished records, 0 error records, 5 invalid records (not counted)", 1, true), md)
  assert(md:find("| sparsemax | 3 |", 1, true) and md:find("| softmax | 3 |", 1, true), "seeds 4-7 counted:\n" .. md)
  assert(md:find("- invalid record fashion_mnist__softmax__seed4.json: test_accuracy 2 is not in [0, 1]; not counted", 1, true), md)
  assert(not md:find("200.00", 1, true) and not md:find("zzz |", 1, true), md)
  assert(out:find("report written to", 1, true), out)
end }

-- A sweep's folder: the records must be the runs their names stand for, made with the
-- experiment's config (an edited or copied-in record was counted under the normalizer and
-- seed written inside it, and with another schedule, silently).
local function sweep_folder(d, with_overrides)
  local exp = { name = "mini", baseline = "softmax", normalizers = { "softmax", "entmax15" }, seeds = { 1, 2, 3 },
    datasets = { { name = "fashion_mnist", dataset = "fashion_mnist", study = true, overrides = with_overrides and {} or nil },
                 { name = "fm_masked", dataset = "fashion_mnist", study = false,
                   overrides = with_overrides and { padding = "masked" } or nil } },
    schedule = { epochs = 2, batch_size = 128, lr = 0.001, val = 0 }, overrides = {}, runs = {} }
  for s = 1, 3 do
    for _, n in ipairs({ "softmax", "entmax15" }) do
      exp.runs[name_of("fashion_mnist", n, s)] = { dataset = "fashion_mnist", normalizer = n, seed = s }
      put(d, good({ normalizer = n, seed = s, acc = 0.5 + s / 64 + (n == "softmax" and 0 or 1 / 64) }))
    end
  end
  exp.runs[name_of("fm_masked", "softmax", 1)] = { dataset = "fm_masked", normalizer = "softmax", seed = 1 }
  put(d, good({ padding = "masked" }), name_of("fm_masked", "softmax", 1))
  write(d .. "/experiment.json", al.json.encode(exp))
  return exp
end
local function invalid_of(d)
  local data = report.load(d)
  local why = {}
  for _, u in ipairs(data.unreadable) do why[u.name] = u.why end
  return why, data
end
cases[#cases + 1] = { name = "a sweep's folder: a record that is not the run its name stands for is invalid, never counted", fn = function()
  for _, with_overrides in ipairs({ true, false }) do
    local d = tmpdir()
    sweep_folder(d, with_overrides)
    local why, data = invalid_of(d)
    T.eq({ next(why), #data.runs }, { nil, 7 }, 0, "the sweep's own records are all counted")
    -- an entmax15 record edited to say softmax, seed 9 (it was averaged in as softmax)
    local e = good({ normalizer = "softmax", seed = 9, acc = 0.6 })
    put(d, e, name_of("fashion_mnist", "entmax15", 3))
    -- seed 2's record copied over seed 1's
    put(d, good({ seed = 2, acc = 0.52 }), name_of("fashion_mnist", "softmax", 1))
    -- a record of another dataset under this dataset's name
    put(d, good({ dataset = "kmnist", normalizer = "entmax15", seed = 2 }), name_of("fashion_mnist", "entmax15", 2))
    -- a record of no run
    put(d, good({ seed = 3 }), "my_run")
    why, data = invalid_of(d)
    T.eq(why[name_of("fashion_mnist", "entmax15", 3)], "its config (normalizer 'softmax', seed 9) is the run " ..
      "fashion_mnist__softmax__seed9, not the one its file name stands for")
    T.eq(why[name_of("fashion_mnist", "softmax", 1)], "its config (normalizer 'softmax', seed 2) is the run " ..
      "fashion_mnist__softmax__seed2, not the one its file name stands for")
    T.eq(why[name_of("fashion_mnist", "entmax15", 2)],
      "config.dataset is 'kmnist', but experiment.json's fashion_mnist runs on 'fashion_mnist'")
    T.eq(why.my_run, "its name is not <dataset>__<normalizer>__seed<k>, and experiment.json's runs do not list it")
    T.eq(#data.runs, 4)
    for _, r in ipairs(data.runs) do T.truthy(r.seed <= 3 and r.name == name_of(r.label, r.normalizer, r.seed), r.name) end
  end
end }
cases[#cases + 1] = { name = "records that are not the experiment's runs (another dataset inside, a stray record) are listed as invalid, never counted nor in a Holm family", fn = function()
  -- no experiment.json: kmnist__* files holding fashion_mnist runs are no kmnist section
  local d = tmpdir()
  put(d, good({ seed = 1, acc = 0.6 })); put(d, good({ seed = 2, acc = 0.62 }))
  put(d, good({ seed = 1, acc = 0.6 }), name_of("kmnist", "softmax", 1))
  put(d, good({ normalizer = "entmax15", seed = 1 }), name_of("kmnist", "sparsemax", 1))
  local why, data = invalid_of(d)
  T.eq(why[name_of("kmnist", "softmax", 1)], "config.dataset is 'fashion_mnist', not the kmnist its file name stands for")
  T.eq(why[name_of("kmnist", "sparsemax", 1)], "its config (normalizer 'entmax15', seed 1) is the run " ..
    "kmnist__entmax15__seed1, not the one its file name stands for")
  T.eq(#data.runs, 2)
  for _, r in ipairs(data.runs) do T.eq(r.label, "fashion_mnist", 0, r.name) end
  -- a fashion_mnist-only sweep's folder with a stray cifar10 record: not counted, no cifar10
  -- comparison in the family (which would double the real Holm p)
  d = tmpdir()
  local exp = sweep_folder(d, true)
  local A0 = report.analyze(report.load(d))
  put(d, good({ dataset = "cifar10", seed = 1, acc = 0.4 }))
  put(d, good({ dataset = "cifar10", normalizer = "entmax15", seed = 1, acc = 0.45 }))
  put(d, good({ dataset = "cifar10", seed = 2, acc = 0.41 }))
  put(d, good({ dataset = "cifar10", normalizer = "entmax15", seed = 2, acc = 0.47 }))
  why, data = invalid_of(d)
  T.eq(why[name_of("cifar10", "softmax", 1)], "not a run of this experiment: experiment.json's runs do not list " ..
    name_of("cifar10", "softmax", 1))
  T.eq(#data.runs, 7)
  local A = report.analyze(data)
  T.eq(A.datasets, A0.datasets)
  T.eq(A.families[1].m, A0.families[1].m, 0, "family size")
  T.eq(A.vs_baseline.fashion_mnist.entmax15.holm, A0.vs_baseline.fashion_mnist.entmax15.holm, 1e-15, "Holm p")
  -- listed by name, but its dataset is none of the experiment's
  exp.runs[name_of("cifar10", "softmax", 1)] = { dataset = "cifar10", normalizer = "softmax", seed = 1 }
  write(d .. "/experiment.json", al.json.encode(exp))
  T.eq((invalid_of(d))[name_of("cifar10", "softmax", 1)],
    "not a run of this experiment: its dataset cifar10 is none of experiment.json's datasets")
  -- analyze.lua names them on stderr
  local _, err, code = T.run_host(("scripts/analyze.lua %s --no-plots --out %s"):format(q(d), q(d .. "/R.md")))
  T.eq(code, 0, 0, err)
  assert(err:find("cifar10__entmax15__seed2.json: not a run of this experiment", 1, true), err)
end }
cases[#cases + 1] = { name = "analyze.lua: --out onto a record, experiment.json or a .json of the folder, and an empty RESULTS_DIR, are usage errors (exit 2, one line, nothing written)", fn = function()
  local d = tmpdir()
  sweep_folder(d, true)
  local rec_path = d .. "/" .. name_of("fashion_mnist", "softmax", 1) .. ".json"
  local before_rec, before_exp = read(rec_path), read(d .. "/experiment.json")
  for _, o in ipairs({ { rec_path, "is a record (.json) of the analyzed folder" },
                       { d .. "/experiment.json", "is the experiment.json of the analyzed folder" },
                       { d .. "/new.json", "would be read as a record next time" },
                       { d .. "/sub/../report.json", "is a .json file of the analyzed folder" } }) do
    local out, err, code = T.run_host(("scripts/analyze.lua %s --no-plots --out %s"):format(q(d), q(o[1])))
    T.eq(code, 2, 0, o[1] .. ": " .. err)
    one_line(err, o[1])
    no_traceback(err)
    assert(err:find("^analyze%.lua: %-%-out ") and err:find(o[2], 1, true), err)
    T.eq(out, "", 0, o[1])
  end
  T.eq({ read(rec_path) == before_rec, read(d .. "/experiment.json") == before_exp, read(d .. "/new.json") },
       { true, true, nil }, 0, "files changed")
  local out, err, code = T.run_host("scripts/analyze.lua '' --no-plots")
  T.eq({ code, out }, { 2, "" }, 0, err)
  one_line(err)
  assert(err:find("RESULTS_DIR is an empty path", 1, true), err)
  -- a .md next to the records is fine
  _, err, code = T.run_host(("scripts/analyze.lua %s --no-plots --out %s"):format(q(d), q(d .. "/R.md")))
  T.eq(code, 0, 0, err)
end }
cases[#cases + 1] = { name = "a symlinked record is counted by the report as by the sweep; a link to nothing is listed as invalid", fn = function()
  local d, src = tmpdir(), tmpdir()
  put(d, good({ seed = 1 }))
  local target = put(src, good({ seed = 2, acc = 0.6 }))
  T.sh(("ln -s %s %s"):format(q(target), q(d .. "/" .. name_of("fashion_mnist", "softmax", 2) .. ".json")))
  T.sh(("ln -s %s %s"):format(q(src .. "/nothing.json"), q(d .. "/" .. name_of("fashion_mnist", "softmax", 3) .. ".json")))
  local why, data = invalid_of(d)
  T.eq(#data.runs, 2, 0, "the linked record is counted")
  T.eq(why[name_of("fashion_mnist", "softmax", 3)], "a symbolic link to nothing (its target does not exist)")
  -- the sweep counts the linked record as finished too
  T.eq((al.sweep.state({ out = d .. "/" .. name_of("fashion_mnist", "softmax", 2) .. ".json",
    config = copy(good({ seed = 2 }).config) })), "done")
end }
cases[#cases + 1] = { name = "a sweep's folder: a record of another schedule is invalid (when experiment.json keeps the datasets' settings)", fn = function()
  local d = tmpdir()
  sweep_folder(d, true)
  local b = good({ seed = 2, acc = 0.9 }); b.config.batch_size = 64; put(d, b)
  local l = good({ normalizer = "entmax15", seed = 1 }); l.config.lr = 0.002; put(d, l)
  local m = good({ seed = 1 }); put(d, m, name_of("fm_masked", "softmax", 1))      -- positions, not masked
  local why, data = invalid_of(d)
  T.eq(why[name_of("fashion_mnist", "softmax", 2)], "made with another config than experiment.json's " ..
    "(batch_size: record has 64, experiment has 128)")
  T.eq(why[name_of("fashion_mnist", "entmax15", 1)], "made with another config than experiment.json's " ..
    "(lr: record has 0.002, experiment has 0.001)")
  T.eq(why[name_of("fm_masked", "softmax", 1)], "made with another config than experiment.json's " ..
    "(padding: record has positions, experiment has masked)")
  T.eq(#data.runs, 4)
  -- analyze.lua names each, one line, and the report counts none of them
  local _, err, code = T.run_host(("scripts/analyze.lua %s --no-plots --out %s"):format(q(d), q(d .. "/R.md")))
  T.eq(code, 0, 0, err)
  assert(err:find("fashion_mnist__softmax__seed2.json: made with another config than experiment.json's " ..
    "(batch_size: record has 64, experiment has 128)", 1, true), err)
  no_traceback(err)
  -- an experiment.json from before the datasets' settings were kept: the schedule is not checked
  d = tmpdir()
  sweep_folder(d, false)
  put(d, b)
  T.eq({ next((invalid_of(d))) }, { nil })
end }

cases[#cases + 1] = { name = "experiment.json: a malformed field or no JSON is one line naming the file and the field", fn = function()
  local d = tmpdir()
  put(d, good()); put(d, good({ seed = 2 }))
  local function bad(txt, want)
    write(d .. "/experiment.json", txt)
    T.raises(function() report.load(d) end, d .. "/experiment.json" .. want)
    local out, err, code = T.run_host(("scripts/analyze.lua %s --no-plots --out %s"):format(q(d), q(d .. "/R.md")))
    T.eq(code, 1, 0, out .. err)
    one_line(err, txt)
    no_traceback(err)
    assert(err:find(d .. "/experiment.json" .. want, 1, true), err)
    T.eq(out, "", 0, "nothing printed")
  end
  bad('{"name":5,"baseline":7,"families":"x"}', ": name must be a non-empty string, got 5")
  bad('{"baseline":7}', ": baseline must be a normalizer name, got 7")
  bad('{"families":"x"}', ": families must be a list of family objects, got 'x'")
  bad('{"datasets":[5]}', ": datasets must be a list of dataset labels or { name =, study =, overrides = } objects, got a list")
  bad('{"runs":{"a":5}}', ": runs must be an object mapping record names")
  bad('{"quick":"no"}', ": quick must be true or false, got 'no'")
  bad('{"name": "x", ', " is not JSON (")
  bad("", " is not JSON (")
  bad("[1]", " holds a list, want the object a sweep writes")
  -- a good one is used
  write(d .. "/experiment.json", al.json.encode({ name = "probe", baseline = "softmax", normalizers = { "softmax" } }))
  T.eq(report.load(d).experiment.name, "probe")
end }

cases[#cases + 1] = { name = "no finished records: analyze.lua and the table scripts say so in one line (exit 1), no empty table", fn = function()
  local empty, errs, other = tmpdir(), tmpdir(), tmpdir()
  write(errs .. "/fashion_mnist__softmax__seed1.json", al.json.encode({ error = "patch 5 does not fit", attempts = 1,
    config = { normalizer = "softmax", seed = 1 } }))
  put(other, good())                                          -- a sweep's record: softmax only, no candidates
  local function refused(args, want)
    local out, err, code = T.run_host(args)
    T.eq(code, 1, 0, args .. ": " .. out .. err)
    one_line(err, args)
    no_traceback(err)
    assert(err:find(want, 1, true), args .. ": " .. err)
    T.eq(out, "", 0, args .. " printed a table")
  end
  refused("scripts/analyze.lua " .. q(empty) .. " --no-plots", "no finished records in " .. empty)
  refused("scripts/analyze.lua " .. q(errs) .. " --no-plots",
    "no finished records in " .. errs .. "; 1 error record: fashion_mnist__softmax__seed1 (patch 5 does not fit)")
  T.eq(read(errs .. "/REPORT.md"), nil, 0, "no report of nothing written")
  refused("experiments/normalizers/full/val_topk.lua " .. q(empty), "no finished records in " .. empty)
  refused("experiments/normalizers/full/val_topk.lua " .. q(errs), "no finished records in " .. errs .. "; 1 error record")
  refused("experiments/normalizers/full/val_topk.lua " .. q(other), "no records of topk:0.125, topk:0.25, topk:0.5 in " .. other)
  refused("experiments/normalizers/full/masking.lua " .. q(empty), "no finished records in " .. empty)
  refused("experiments/normalizers/full/init_sign.lua " .. q(other) .. " " .. q(errs), "no finished records in " .. errs)
  refused("experiments/classifier/parity_table.lua " .. q(empty), "no records (<dataset>__<impl>__seed<k>.json")
  refused("experiments/classifier/parity_table.lua " .. q(other), "no records (<dataset>__<impl>__seed<k>.json")
end }

-- val_topk.lua's fixture: 2 seeds of softmax and the three top-k ratios, with validation scores.
local function val_fixture(d)
  for s = 1, 2 do
    put(d, good({ seed = s, acc = 0.5, val = 0.6 }))
    put(d, good({ normalizer = "topk:0.125", seed = s, acc = 0.5 + s / 64, val = 0.7 }))
    put(d, good({ normalizer = "topk:0.25", seed = s, acc = 0.5 + 2 * s / 64, val = 0.8 }))
    put(d, good({ normalizer = "topk:0.5", seed = s, acc = 0.5 + s / 64, val = 0.75 }))
  end
end

cases[#cases + 1] = { name = "val_topk.lua: a validation accuracy of 7.0 is refused naming the file (never chosen); failed runs named", fn = function()
  local d = tmpdir()
  val_fixture(d)
  local out, err, code = T.run_host("experiments/normalizers/full/val_topk.lua " .. q(d))
  T.eq(code, 0, 0, err)
  assert(out:find("| fashion_mnist | topk:0.25 |", 1, true), out)
  -- topk:0.125's last validation accuracy 7.0 (700 %) would win the choice
  local r = good({ normalizer = "topk:0.125", seed = 2, acc = 0.5, val = 0.7 })
  r.epochs[2].val_accuracy = 7.0
  local path = put(d, r)
  out, err, code = T.run_host("experiments/normalizers/full/val_topk.lua " .. q(d))
  T.eq(code, 1, 0, out .. err)
  one_line(err)
  T.eq(err, "val_topk.lua: " .. path .. ": epochs[2].val_accuracy 7.0 is not in [0, 1]\n")
  T.eq(out, "")
  -- a failed run instead: the table is made without it, and a line on stderr names it
  write(path, al.json.encode({ error = "loss became NaN at epoch 2", attempts = 1, config = { normalizer = "topk:0.125", seed = 2 } }))
  out, err, code = T.run_host("experiments/normalizers/full/val_topk.lua " .. q(d))
  T.eq(code, 0, 0, err)
  T.eq(err, "val_topk.lua: failed run " .. path .. " (error record: loss became NaN at epoch 2); not in the table\n")
  assert(out:find("| fashion_mnist | topk:0.25 |", 1, true), out)
end }

cases[#cases + 1] = { name = "masking.lua and init_sign.lua: a truncated or degenerate record is one line naming it, never dropped silently", fn = function()
  local d = tmpdir()
  for s = 1, 3 do
    put(d, good({ dataset = "newsgroups20", seed = s, acc = 0.5 }))
    put(d, good({ dataset = "newsgroups20", normalizer = "sparsemax", seed = s, acc = 0.5 + s / 64 }))
    put(d, good({ dataset = "newsgroups20_masked", config_dataset = "newsgroups20", padding = "masked", seed = s, acc = 0.25 }),
      name_of("newsgroups20_masked", "softmax", s))
    put(d, good({ dataset = "newsgroups20_masked", config_dataset = "newsgroups20", padding = "masked", normalizer = "sparsemax",
                  seed = s, acc = 0.25 + 2 * s / 64 }), name_of("newsgroups20_masked", "sparsemax", s))
  end
  local out, err, code = T.run_host("experiments/normalizers/full/masking.lua " .. q(d))
  T.eq(code, 0, 0, err)
  assert(out:find("| newsgroups20 | sparsemax |", 1, true), out)
  local path = d .. "/newsgroups20_masked__softmax__seed3.json"
  write(path, read(path):sub(1, 300))
  out, err, code = T.run_host("experiments/normalizers/full/masking.lua " .. q(d))
  T.eq(code, 1, 0, out .. err)
  one_line(err)
  assert(err:find("^masking%.lua: " .. path:gsub("%p", "%%%0") .. ": not JSON %(truncated%?%): "), err)
  T.eq(out, "")
  -- init_sign.lua, the same folder as either condition
  out, err, code = T.run_host(("experiments/normalizers/full/init_sign.lua %s %s"):format(q(d), q(d)))
  T.eq(code, 1, 0, out .. err)
  one_line(err)
  assert(err:find(path, 1, true) and err:find("not JSON", 1, true), err)
  -- two bad files: the first named, the others counted
  local r = good({ dataset = "newsgroups20", seed = 3, acc = 0.5 }); r.epochs = {}
  put(d, r)
  out, err, code = T.run_host("experiments/normalizers/full/masking.lua " .. q(d))
  T.eq(code, 1, 0, out .. err)
  one_line(err)
  assert(err:find("epochs is an empty list", 1, true) and err:find("(and 1 more invalid record: ", 1, true), err)
end }

cases[#cases + 1] = { name = "parity_table.lua: epochs [5], a loss 'x', an accuracy of 2 are one line naming the file (no traceback, no 108.90 %)", fn = function()
  local d = tmpdir()
  local function fixture()
    for s = 1, 2 do
      for _, impl in ipairs({ "attnlab-torch", "torch" }) do
        put(d, good({ seed = s, acc = 0.5 + s / 64 }), ("fashion_mnist__%s__seed%d"):format(impl, s))
      end
    end
  end
  fixture()
  local out, err, code = T.run_host("experiments/classifier/parity_table.lua " .. q(d))
  T.eq(code, 0, 0, err)
  assert(out:find("| PyTorch (its defaults) | 1,2 |", 1, true), out)
  local path = d .. "/fashion_mnist__torch__seed1.json"
  for _, b in ipairs({
    { function(r) r.epochs = { 5 }; r.config.epochs = 1 end, "epochs[1] is 5, want an object" },
    { function(r) r.epochs[1].loss = "x" end, "epochs[1].loss is 'x', want a finite number" },
    { function(r) r.test_accuracy = 2 end, "test_accuracy 2 is not in [0, 1]" },
    { function(r) r.epochs = {} end, "epochs is an empty list (no epoch was recorded)" },
  }) do
    local r = good({ seed = 1, acc = 0.5 + 1 / 64 })
    b[1](r)
    put(d, r, "fashion_mnist__torch__seed1")
    out, err, code = T.run_host("experiments/classifier/parity_table.lua " .. q(d))
    T.eq(code, 1, 0, out .. err)
    one_line(err)
    no_traceback(err)
    T.eq(err, ("parity_table.lua: %s is not a training record (%s)\n"):format(path, b[2]), 0, b[2])
    T.eq(out, "", 0, "half a table printed")
  end
end }

-- config_change compares every key of either side: a key the experiment leaves out is its
-- al.train default, a key the record lacks its legacy value, and a key only the record holds
-- (trained with lr 0.5, the experiment now on the default) is a change, not skipped.
cases[#cases + 1] = { name = "config_change: a key only the record sets is compared with the default", fn = function()
  local want = good().config
  T.eq(R.config_change(good(), want), nil, nil, "the same config ")
  local rec = good()
  rec.config.lr = 0.5
  want.lr = nil
  T.eq(al.train.DEFAULTS.lr, 0.001)
  T.eq(R.config_change(rec, want), "lr: record has 0.5, experiment has 0.001")
  local old = good()
  old.config.init = nil
  T.eq(R.config_change(old, good().config), "init: record has timm, experiment has torch")
end }

cases[#cases + 1] = { name = "(cleanup of the temporary folders)", fn = function()
  for _, d in ipairs(TMP) do T.rm_rf(d) end
end }

return cases
