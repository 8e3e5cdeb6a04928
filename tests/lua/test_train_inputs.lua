-- tests/lua/test_train_inputs.lua -- what one classifier training run (lua/attnlab/run/train.lua,
-- run/fit.lua, scripts/train.lua) does with bad input: a diverged run, a corrupt but loadable
-- checkpoint, --out on the checkpoint, option values and limits the data cannot meet. Each is
-- ONE line naming the problem and a nonzero exit (2 for a usage error); never a traceback,
-- never a record. Also the measured speed when batch_size exceeds the training set. Tiny runs
-- of Fashion-MNIST (skipped when it is not found); temporary files in a mktemp -d folder.
local al = require "attnlab"
local T = require "harness"
local fit = require "attnlab.run.fit"

local abspath = require("attnlab.util").abspath
local HOST = abspath(os.getenv("ATTNLAB_HOST") or "bin/attnlab")
local TRAIN = abspath("scripts/train.lua")
local q = T.shquote

-- stdout, stderr, exit status of `HOST scripts/train.lua args` (run in folder `dir` when given)
local function run(args, dir) return T.run_host(q(TRAIN) .. " " .. args, { host = HOST, dir = dir }) end

local function need_fmnist()
  T.need_data(al.data.fashion_mnist, { split = "test" }, "Fashion-MNIST")
end

-- one user error: status `code`, exactly one line "train.lua: ..." holding every pattern, no
-- traceback, no Lua source position, no internal Lua message
local function one_line_error(err, code, want_code, pats)
  T.eq(code, want_code, 0, "exit status (stderr: " .. err .. ")")
  assert(err:sub(1, 11) == "train.lua: ", "stderr does not start with 'train.lua: ': " .. err)
  local n = 0
  for _ in err:gmatch("[^\n]+") do n = n + 1 end
  T.eq(n, 1, 0, "lines of stderr: " .. err)
  assert(not err:find("traceback", 1, true) and not err:find("%.lua:%d+:") and not err:find("attempt to", 1, true)
    and not err:find("bad argument", 1, true), "internal text in: " .. err)
  for _, p in ipairs(pats) do assert(err:find(p, 1, true), ("stderr lacks %q: %s"):format(p, err)) end
  print("#   " .. err:gsub("\n$", ""))
end

local TINY = "--dataset fashion_mnist --epochs 1 --test_limit 100 --progress false"
local function tiny(over)
  local c = { dataset = "fashion_mnist", epochs = 1, train_limit = 64, test_limit = 50, progress = false, dim = 16, heads = 2,
              depth = 1 }
  for k, v in pairs(over or {}) do c[k] = v end
  return c
end

local cases, case = T.suite()
-- a case that gets a fresh temporary folder, removed whether it passes or fails
local function case_in_tmp(name, fn)
  case(name, function()
    local d = T.tmpdir("train-inputs")
    local ok, e = pcall(fn, d)
    T.rm_rf(d)
    if not ok then error(e, 0) end
  end)
end

-- ---- 1. divergence ---------------------------------------------------------------------------
case_in_tmp("train.lua --lr 1e30: a NaN loss or ruined weights stop the run with one line, no record", function(d)
  need_fmnist()
  -- 200 examples: the second step's logits hold NaN, so its loss is NaN, as PyTorch's
  -- cross_entropy gives (it was inf while log_softmax took a row of NaN and -inf for empty)
  local _, err, code = run(TINY .. " --train_limit 200 --lr 1e30 --clip_grad 0 --out " .. q(d .. "/a.json"))
  one_line_error(err, code, 1, { "loss became NaN at epoch 1 step 2" })
  T.eq(T.read_file(d .. "/a.json"), nil, 0, "a record was written")
  -- 128 examples: one step, its loss finite, the update leaves weights that overflow the logits
  _, err, code = run(TINY .. " --train_limit 128 --lr 1e30 --clip_grad 0 --out " .. q(d .. "/b.json"))
  one_line_error(err, code, 1, { "the test loss is", "after epoch 1", "diverged", "no record written" })
  T.eq(T.read_file(d .. "/b.json"), nil, 0, "a record was written")
end)

-- a Linear model on 8 synthetic examples, one 2-epoch stage: fit.run's own behaviour, in milliseconds
local function synth_fit()
  al.manual_seed(1)
  local model = al.nn.Linear(4, 3)
  local x = al.randn({ 8, 4 })
  local y = al.tensor({ 1, 2, 3, 1, 2, 3, 1, 2 }, { dtype = "int64" })
  local ds = setmetatable({ name = "synth", n = 8, num_classes = 3, make_batch = function(_, idx)
    return al.index_select(x, 1, idx), al.index_select(y, 1, idx)
  end }, al.data.Dataset)
  local stage = { name = "s", epochs = 2, lr = 1e-2, step = function(xb, yb) return al.cross_entropy(model(xb), yb) end }
  return model, stage, ds
end
case_in_tmp("fit.run: a parameter made NaN by the epoch's last update stops the run before eval and checkpoint", function(d)
  local model, stage, ds = synth_fit()
  local evaluated = false
  stage.eval = function() evaluated = true return {} end
  local err = T.raises(function()
    fit.run(model, { stage }, { train = ds, batch_size = 4, key = "k", checkpoint = d .. "/c.ckpt", on_epoch = function() end,
      -- what a too-large last update leaves: the loss it was taken from was finite
      on_step = function(i) if i.step == 2 then al.no_grad(function() model.bias:fill_(0 / 0) end) end end })
  end, "parameter bias became NaN or inf in stage s in epoch 1")
  T.truthy(not evaluated, "the ruined weights were evaluated")
  T.eq(T.read_file(d .. "/c.ckpt"), nil, 0, "a checkpoint of ruined weights was written")
  print("#   " .. err:gsub("^[^%s:]+%.lua:%d+: ", ""))
end)

-- ---- 2. speed when batch_size exceeds the training set ----------------------------------------------
case("train_img_per_s counts the examples a step processed, not batch_size", function()
  need_fmnist()
  local rec = al.train.run(tiny({ train_limit = 200, batch_size = 100000 }))
  T.truthy(rec.train_s_per_step and rec.train_s_per_step > 0, "no step time")
  T.eq(rec.train_img_per_s, 200 / rec.train_s_per_step, 1e-9 * rec.train_img_per_s, "img/s of one 200-example step")
end)

-- ---- 3. corrupt but loadable checkpoints ---------------------------------------------------------
-- a good checkpoint and copies of it with one thing broken; each resumed by the same
-- configuration is refused with one message naming the file and the field
local function fit_with(ckpt, stop_after)
  local model, stage, ds = synth_fit()
  return fit.run(model, { stage }, { train = ds, batch_size = 4, key = "k", checkpoint = ckpt, stop_after = stop_after,
    on_step = function() end, on_epoch = function() end })
end

-- a copy of checkpoint `good` as dir/name.ckpt, its state edited by edit(state) and its
-- tensors and metadata by edit_sd(sd, meta); its tensors' checksum made anew (a file that is
-- whole but wrong, for the checks behind the checksum), or kept stale (a damaged file)
local function craft(good, dir, name, edit, edit_sd, stale_digest)
  local sd, meta = al.load(good)
  local st = al.json.decode(meta.state)
  if edit then edit(st) end
  meta.state = al.json.encode(st)
  if edit_sd then edit_sd(sd, meta) end
  T.truthy(meta.tensors_sha256 or edit_sd, "the checkpoint carries its tensors' checksum")
  if meta.tensors_sha256 and not stale_digest then meta.tensors_sha256 = fit.tensors_digest(sd) end
  local path = dir .. "/" .. name .. ".ckpt"
  al.save(path, sd, meta)
  return path
end

local function refused(err, path, want, label)
  assert(err:find("checkpoint " .. path .. " is ", 1, true) and err:find(want, 1, true),
    ("%s: the error lacks the file or %q: %s"):format(label, want, err))
  assert(err:find("delete it", 1, true) and not err:find("\n") and not err:find("attempt to", 1, true)
    and not err:find("bad argument", 1, true), err)
  print("#   " .. label .. ": " .. err:gsub("^[^%s:]+%.lua:%d+: ", ""))
end

case_in_tmp("fit.run: a corrupt but loadable checkpoint is refused, naming the file and the field", function(d)
  local good = d .. "/good.ckpt"
  local _, stopped = fit_with(good, 1)                 -- epoch 1 of 2 done: 2 steps, sched_t 2
  T.truthy(stopped, "stopped after one epoch")
  T.eq(#fit_with(good), 2, 0, "the good checkpoint resumes")
  os.remove(good)
  fit_with(good, 1)
  local bad = {
    { "epoch_neg", function(st) st.epoch = -5 end, "epoch = -5, want an integer in 0..2" },
    { "epoch_str", function(st) st.epoch = "x" end, "epoch = 'x', want an integer in 0..2" },
    { "epoch_over", function(st) st.epoch = 7 end, "epoch = 7, want an integer in 0..2" },
    { "history_num", function(st) st.history = 5 end, "history = 5, want a list of 1 epoch record" },
    { "history_len", function(st) st.history = {} end, "history = a list of 0, want a list of 1 epoch record" },
    { "history_loss", function(st) st.history[1].loss = nil end, "history[1] is not an epoch record" },
    { "history_accuracy", function(st) st.history[1].test_accuracy = 7.5 end, "history[1].test_accuracy = 7.5, want an accuracy in [0, 1]" },
    { "history_accuracy_str", function(st) st.history[1].val_accuracy = "x" end, "history[1].val_accuracy = 'x', want an accuracy" },
    { "history_accuracy_null", function(st) st.history[1].test_accuracy = al.json.null end,
      "history[1].test_accuracy = null, want an accuracy in [0, 1]" },
    { "stage", function(st) st.stage = 9 end, "stage = 9, want an integer in 1..1" },
    { "no_sched_t", function(st) st.sched_t = nil end, "sched_t = (missing), want 2" },
    { "sched_t", function(st) st.sched_t = 3 end, "sched_t = 3, want 2" },
    { "key", function(st) st.key = 5 end, "key = 5" },
    { "nan_weight", nil, "model tensor weight holds NaN or inf", function(sd) sd["model.weight"]:fill_(0 / 0) end },
    { "nan_optim", nil, "optimizer tensor", function(sd)
      for k, v in pairs(sd) do if k:match("^optim%.state%.1%.") and v:dtype() == "float32" then v:fill_(1 / 0) end end end },
    { "bad_shape", nil, "weight: checkpoint (3,3), model (3,4)", function(sd) sd["model.weight"] = al.zeros({ 3, 3 }) end },
    -- one weight changed, as a flipped bit would: whole in form, wrong in value; it resumed
    { "changed_weight", nil, "its tensors do not match the checksum written with them", function(sd)
      local w = sd["model.weight"]:clone(); w[1][1] = w[1][1]:item() * 2 ^ 64; sd["model.weight"] = w end, true },
    { "no_state", nil, "is unreadable (it has no 'state' metadata", function(_, meta) meta.state = nil end },
    { "state_not_json", nil, "is unreadable (its 'state' metadata is not a JSON object", function(_, meta) meta.state = "5" end },
  }
  for _, b in ipairs(bad) do
    local path = craft(good, d, b[1], b[2], b[3 + 1], b[5])
    refused(T.raises(function() fit_with(path) end, path), path, b[3], b[1])
  end
end)

case_in_tmp("train: a checkpoint's bad step_times is refused; on the command line one line, exit 1, no record", function(d)
  need_fmnist()
  local good = d .. "/good.ckpt"
  al.train.run(tiny({ checkpoint = good }))
  local path = craft(good, d, "step_times", function(st) st.step_times = "abc" end)
  refused(T.raises(function() al.train.run(tiny({ checkpoint = path })) end, path), path,
    "step_times = 'abc', want a list of step times in seconds", "step_times")
  path = craft(good, d, "no_accuracy", function(st) st.history[1].test_accuracy = nil end)   -- (JSON null)
  refused(T.raises(function() al.train.run(tiny({ checkpoint = path })) end, path), path,
    "history[1] has no test_accuracy", "no_accuracy")
  path = craft(good, d, "epoch_neg", function(st) st.epoch = -5 end)
  local before = T.read_file(path)
  local _, err, code = run(("--dataset fashion_mnist --epochs 1 --train_limit 64 --test_limit 50 --dim 16 --heads 2 " ..
    "--depth 1 --progress false --checkpoint %s --out %s"):format(q(path), q(d .. "/r.json")))
  one_line_error(err, code, 1, { "checkpoint " .. path .. " is corrupt", "epoch = -5" })
  T.eq(T.read_file(d .. "/r.json"), nil, 0, "a record was written")
  T.truthy(T.read_file(path) == before, "the checkpoint was changed")
end)

-- ---- 4. --out on the checkpoint ----------------------------------------------------------------------
case_in_tmp("--out equal to --checkpoint (also ./a vs a): a usage error before anything runs", function(d)
  local _, err, code = run(TINY .. " --train_limit 64 --out a.ckpt --checkpoint ./a.ckpt", d)
  one_line_error(err, code, 2, { "out and checkpoint are the same file" })
  _, err, code = run(("%s --train_limit 64 --out %s --checkpoint %s"):format(TINY, q(d .. "/x/../b"),
    q(d .. "/b")))
  one_line_error(err, code, 2, { "out and checkpoint are the same file" })
  T.raises(function() al.train.run(tiny({ out = d .. "/c", checkpoint = d .. "/./c" })) end, "out and checkpoint are the same file")
  local p = io.popen("ls -A " .. q(d))
  T.eq(p:read("a"), "", 0, "files left")
  p:close()
end)

-- ---- 5. option values ------------------------------------------------------------------------------
case("--warmup_epochs nan says fractions and 0 are allowed; --patch 5 is a usage error (exit 2)", function()
  local _, err, code = run(TINY .. " --warmup_epochs nan")
  one_line_error(err, code, 2, { "warmup_epochs must be a finite number >= 0", "fractions", "got 'nan'" })
  assert(not err:find("positive integer", 1, true), err)
  _, err, code = run(TINY .. " --warmup_epochs -1")
  one_line_error(err, code, 2, { "warmup_epochs must be a finite number >= 0", "got -1" })
  _, err, code = run(TINY .. " --patch 5")
  one_line_error(err, code, 2, { "patch = 5 does not fit fashion_mnist", "not a multiple of patch_size 5", "2, 4, 7, 14" })
  T.eq(al.train.patch_problem(al.train.config({ dataset = "cifar10", patch = 6 })),
    "patch = 6 does not fit cifar10: image_size 32 is not a multiple of patch_size 6 (use one of 2, 4, 8, 16)")
  T.eq(al.train.patch_problem(al.train.config({ dataset = "cifar10", patch = 4 })), nil)
end)

case_in_tmp("--train_limit / --test_limit above the data's size: a usage error naming the size, no record", function(d)
  need_fmnist()
  local _, err, code = run("--dataset fashion_mnist --epochs 1 --progress false --train_limit 100000 --out "
    .. q(d .. "/a.json"))
  one_line_error(err, code, 2, { "train_limit = 100000 is more than the 60000 training examples of fashion_mnist" })
  _, err, code = run("--dataset fashion_mnist --epochs 1 --progress false --train_limit 64 --test_limit 20000 --out "
    .. q(d .. "/a.json"))
  one_line_error(err, code, 2, { "test_limit = 20000 is more than the 10000 test examples of fashion_mnist" })
  T.eq(T.read_file(d .. "/a.json"), nil, 0, "a record was written")
  -- the library raises it too; a limit equal to the size is the whole split
  T.raises(function() al.train.run(tiny({ test_limit = 10001 })) end, "test_limit = 10001 is more than the 10000")
  local rec = al.train.run(tiny({ test_limit = 10000, train_limit = 32 }))
  T.eq({ rec.dataset.test, rec.config.test_limit }, { 10000, 10000 })
end)

return cases
