-- scripts/distill.lua -- the S2S pipeline steps, one subcommand each.
--
--   bin/attnlab scripts/distill.lua teacher --preset experiments/s2s/cifar_small.lua [--quick]
--       train the dense teacher (al.train; or fine-tune a timm checkpoint given as --init PATH;
--       --init timm or torch is the initialisation scheme instead),
--       save <out>/teacher.safetensors and <out>/teacher.json
--   bin/attnlab scripts/distill.lua avit --preset P --keep_rate 0.65 [--quick]
--       fine-tune the teacher into an A-ViT at a target keep rate -> <out>/avit_k0.65.{safetensors,json}
--   bin/attnlab scripts/distill.lua run --preset P --teacher results/.../avit_k0.65.safetensors \
--       --strategy layer_aware:3 [--mixer bimamba|bilstm] [--profile <out>/profile/profile.json] [--name NAME]
--       stage-1 distillation under the teacher's masks, stage-2 fine-tuning with the student's
--       own halting -> <out>/students/NAME.{safetensors,json} (checkpointed; a rerun resumes)
--   bin/attnlab scripts/distill.lua eval --model FILE --dataset cifar10 [--halting true|{...}] [--mode gather]
--   bin/attnlab scripts/distill.lua bench [--preset P] [--sizes 224,384] [--keep_rate 0.7]
--       throughput of dense / A-ViT / S2S forward passes vs resolution (DeiT-Tiny shape)
--
-- Any preset key can be overridden on the command line: --distill.stage1.epochs 3,
-- --train_limit 2000, --halting '{"gate_center":20}'. --quick merges the preset's quick
-- table (a smoke run of the whole pipeline in minutes).
local al = require "attnlab"
local s2s = require "attnlab.s2s"

local cli = al.cli

local SPEC = {
  name = "distill.lua",
  usage = "bin/attnlab scripts/distill.lua teacher|avit|run|eval|bench [--preset FILE] [--quick] [--key value ...]",
  about = "The S2S pipeline, one subcommand per step:\n" ..
          "  teacher  train the dense teacher (or fine-tune a timm checkpoint given as --init)\n" ..
          "  avit     fine-tune the teacher into an A-ViT at --keep_rate\n" ..
          "  run      distill a student: --teacher FILE --strategy layer_aware:3 [--mixer bimamba|bilstm]\n" ..
          "  eval     accuracy and keep rate of --model FILE on --dataset\n" ..
          "  bench    throughput of dense / A-ViT / S2S forward passes vs resolution\n" ..
          "Any preset key can be overridden: --distill.stage1.epochs 3, --train_limit 2000, --halting '{...}'.",
  positional = { { "SUBCOMMAND", "teacher | avit | run | eval | bench" } },
  options = {
    { "preset", "FILE", "an S2S preset (experiments/s2s/*.lua)" },
    { "quick", nil, "merge the preset's quick table (a smoke run of the pipeline)" },
    { "out", "DIR", "output folder (default: the preset's out, else results/s2s)" },
    { "threads", "N", "threads" },
    { "dataset", "NAME", "dataset" }, { "epochs", "E", "epochs" }, { "seed", "K", "seed" },
    { "train_limit", "N", "training examples" }, { "test_limit", "N", "test examples" },
    { "lr", "LR", "learning rate" }, { "batch_size", "B", "batch size" },
    { "init", "FILE", "teacher: fine-tune this timm checkpoint" },
    { "save", "FILE", "teacher: model file" }, { "record", "FILE", "teacher, bench: JSON record" },
    { "progress", "BOOL", "progress lines (default true)" },
    { "keep_rate", "R", "avit: target keep rate" }, { "teacher", "FILE", "avit, run: the teacher model file" },
    { "halting", "JSON|true", "halting settings (avit) / masks (eval)" }, { "name", "NAME", "avit, run: output name" },
    { "strategy", "NAME", "run: uniform | groupwise:<group> | layer_aware[:k] | sparsest[:k]" },
    { "layers", "L,L", "run: replace these layers" }, { "mixer", "NAME", "run: bimamba | bilstm" },
    { "profile", "FILE", "run: the teacher's profile.json (sparsest[:k])" },
    { "teacher_halting", "BOOL", "run: distill under the teacher's halting masks" },
    { "eval_limit", "N", "run: evaluation examples" },
    { "model", "FILE", "eval: the model file; bench: model shape" },
    { "heads", "N", "heads of a timm file whose metadata lacks them (teacher --init, avit, run, eval)" },
    { "image_size", "S", "eval: image size of a timm file" }, { "limit", "N", "eval: test examples" },
    { "mode", "NAME", "eval: gather | masked" },
    { "sizes", "S,S", "bench: resolutions" }, { "keep_rates", "R,R", "bench: keep rates" }, { "batch", "B", "bench: batch" },
    { "iters", "N", "bench: timed iterations" }, { "dim", "D", "bench: width" }, { "depth", "L", "bench: depth" },
    { "patch", "P", "bench: patch size" },
  },
  more_options = { "  --teacher.KEY, --avit.KEY, --distill.KEY, --resolution.KEY VALUE   override a preset section key" },
  examples = { "bin/attnlab scripts/distill.lua teacher --preset experiments/s2s/cifar_small.lua --quick",
               "bin/attnlab scripts/distill.lua run --preset experiments/s2s/cifar_small.lua --teacher " ..
               "results/s2s/cifar_small/avit_k0.65.safetensors --strategy layer_aware:3" },
}
cli.help_requested(SPEC, arg)
local cmd = arg[1]
local COMMANDS = { teacher = true, avit = true, run = true, eval = true, bench = true }
if not cmd then cli.usage_error(SPEC, "no subcommand given") end
if not COMMANDS[cmd] then cli.usage_error(SPEC, ("unknown subcommand '%s'"):format(cmd)) end
local opts, words = cli.parse_pairs(arg, 2, SPEC)
local known = { avit = true, distill = true, resolution = true }
for _, o in ipairs(SPEC.options) do known[o[1]] = true end
cli.check_known(SPEC, opts, known)
cli.check_words(SPEC, words)
local function die(msg) cli.die(SPEC, msg) end
local preset, out

-- ---- the options' values, checked before any work (each one line naming the option) ------------
local function bad(msg) cli.usage_error(SPEC, cmd .. ": " .. msg) end
for _, k in ipairs({ "threads", "epochs", "train_limit", "test_limit", "eval_limit", "batch_size", "heads", "image_size", "limit" }) do
  local v = opts[k]
  if v ~= nil and (math.type(v) ~= "integer" or v < 1) then bad(("--%s needs a positive integer, got '%s'"):format(k, tostring(v))) end
end
if opts.keep_rate ~= nil and not (type(opts.keep_rate) == "number" and opts.keep_rate > 0 and opts.keep_rate <= 1) then
  bad(("--keep_rate needs a keep rate in (0, 1], got '%s'"):format(tostring(opts.keep_rate)))
end
-- NAME becomes <out>/students/NAME.* (or <out>/NAME.*): a name must not lead out of that folder
if opts.name ~= nil then
  local n = opts.name
  if type(n) ~= "string" or n == "" or n:find("/", 1, true) or n:find("..", 1, true) then
    bad(("--name needs a plain file name (no '/' or '..'), got '%s'"):format(tostring(n)))
  end
end
if opts.strategy ~= nil then
  local st = tostring(opts.strategy)
  local base, arg = require("attnlab.s2s.strategies").parse(st)   -- the one reading of a name
  local okst = base == "uniform" or (base == "groupwise" and (arg == "shallow" or arg == "middle" or arg == "deep"))
    or ((base == "layer_aware" or base == "sparsest") and arg >= 1)
  if not okst or type(opts.strategy) ~= "string" then
    bad(("--strategy needs uniform | groupwise:shallow|middle|deep | layer_aware[:k] | sparsest[:k] (k a positive integer), got '%s'")
      :format(st))
  end
end
if opts.teacher_halting ~= nil and type(opts.teacher_halting) ~= "boolean" and type(opts.teacher_halting) ~= "table" then
  bad(("--teacher_halting needs true, false or a JSON object, got '%s'"):format(tostring(opts.teacher_halting)))
end
if opts.halting ~= nil then
  local h = opts.halting
  local okh = type(h) == "table" and (next(h) == nil or #h == 0)   -- an object, not an array
  if cmd ~= "avit" then okh = okh or type(h) == "boolean" end
  if not okh then
    bad(("--halting needs %s, got '%s'"):format(cmd == "avit" and "a JSON object like '{\"gate_center\":20}'"
      or "true, false or a JSON object", type(h) == "table" and "a JSON array" or tostring(h)))
  end
end
if opts.mode ~= nil and opts.mode ~= "gather" and opts.mode ~= "masked" then
  bad(("--mode needs gather or masked, got '%s'"):format(tostring(opts.mode)))
end

local function fmt_rates(r)
  local t = {}
  for i, v in ipairs(r or {}) do t[i] = ("%.2f"):format(v) end
  return table.concat(t, " ")
end

local function run()
  preset = opts.preset and s2s.load_preset(opts.preset, opts.quick) or {}
  out = opts.out or preset.out or "results/s2s"
  if opts.threads then al.set_num_threads(opts.threads) end
  if cmd == "teacher" then
    local c = s2s.deep_merge(preset.teacher or {}, opts.teacher or {})
    for _, k in ipairs({ "epochs", "dataset", "init", "seed", "train_limit", "test_limit", "heads" }) do
      if opts[k] ~= nil then c[k] = opts[k] end
    end
    c.save = opts.save or (out .. "/teacher.safetensors")
    c.out = opts.record or (out .. "/teacher.json")
    c.checkpoint = c.checkpoint or (out .. "/teacher.ckpt")
    c.progress = opts.progress ~= false
    if not require("attnlab.util").mkdir_p(out) then die(("teacher: cannot create the folder %s"):format(out)) end
    -- the model file and the record are written after training: a path that cannot take them
    -- is said now
    for _, f in ipairs({ { c.save, "model" }, { c.out, "record" } }) do
      local can, why = require("attnlab.util").writable_path(f[1])
      if not can then cli.die(SPEC, ("teacher: cannot write the %s to %s: %s"):format(f[2], f[1], why), 2) end
    end
    local rec = s2s.train_teacher(c)
    print(("teacher: test accuracy %.4f, saved %s"):format(rec.test_accuracy, c.save))
    if s2s.init_is_scheme(c.init) then s2s.write_json(c.out, rec) end
  elseif cmd == "avit" then
    local c = s2s.deep_merge(preset.avit or {}, opts.avit or {})
    c.keep_rates, c.main_keep_rate = nil, nil
    c.dataset = opts.dataset or c.dataset or preset.dataset
    c.train_limit, c.test_limit = opts.train_limit or preset.train_limit, opts.test_limit or preset.test_limit
    local kr = opts.keep_rate or s2s.main_keep_rate(preset)
    c.halting = s2s.deep_merge(c.halting or {}, opts.halting or {})
    c.halting.keep_rate = kr
    c.teacher = opts.teacher or (out .. "/teacher.safetensors")
    local name = opts.name or ("avit_k" .. kr)
    c.save = out .. "/" .. name .. ".safetensors"
    c.out = out .. "/" .. name .. ".json"
    c.checkpoint = out .. "/" .. name .. ".ckpt"
    c.progress = opts.progress ~= false
    for _, k in ipairs({ "epochs", "lr", "seed", "batch_size", "heads" }) do if opts[k] ~= nil then c[k] = opts[k] end end
    local rec = s2s.avit(c)
    print(("A-ViT (target keep rate %.2f): accuracy %.4f (dense teacher %.4f), keep rate %.3f, per layer %s")
      :format(kr, rec.test_accuracy, rec.dense_accuracy, rec.mean_keep_rate, fmt_rates(rec.keep_rate)))
    print(("  inference: gathered %.3f ms/img, masked %.3f ms/img, dense %.3f ms/img; record %s")
      :format(rec.s_per_example * 1e3, rec.s_per_example_masked * 1e3, rec.dense_s_per_example * 1e3, c.out))
  elseif cmd == "run" then
    local c = s2s.deep_merge(preset.distill or {}, opts.distill or {})
    c.dataset = opts.dataset or c.dataset or preset.dataset
    c.train_limit, c.test_limit = opts.train_limit or preset.train_limit, opts.test_limit or preset.test_limit
    c.teacher = opts.teacher or c.teacher or cli.usage_error(SPEC, "run: --teacher FILE is required (a teacher or A-ViT model file)")
    c.strategy = opts.strategy or c.strategy
    c.layers = opts.layers or c.layers
    if type(c.layers) == "number" then c.layers = { c.layers } end
    c.mixer = opts.mixer or c.mixer
    c.profile = opts.profile or c.profile
    if opts.teacher_halting ~= nil then c.teacher_halting = opts.teacher_halting end
    for _, k in ipairs({ "lr", "seed", "batch_size", "eval_limit", "heads" }) do if opts[k] ~= nil then c[k] = opts[k] end end
    local mixer_name = type(c.mixer) == "table" and c.mixer.name or c.mixer or "bimamba"
    local name = opts.name or (((c.strategy or "layers") .. "_" .. mixer_name):gsub("[^%w_.%-]", "_"))
    local dir = out .. "/students"
    if not require("attnlab.util").mkdir_p(dir) then die(("run: cannot create the folder %s"):format(dir)) end
    c.save = dir .. "/" .. name .. ".safetensors"
    c.out = dir .. "/" .. name .. ".json"
    c.checkpoint = dir .. "/" .. name .. ".ckpt"
    c.progress = opts.progress ~= false
    local rec = s2s.distill(c)
    print(("S2S student %s (layers %s -> %s): accuracy %.4f, teacher %.4f (gap %.4f); keep rate %.3f (teacher %.3f)")
      :format(name, table.concat(rec.layers, ","), mixer_name, rec.test_accuracy, rec.teacher_accuracy, rec.accuracy_gap,
        rec.mean_keep_rate, rec.teacher_mean_keep_rate))
    print(("  params %d (teacher %d); %.3f ms/img (teacher %.3f); record %s"):format(rec.student_params, rec.teacher_params,
      rec.s_per_example * 1e3, rec.teacher_s_per_example * 1e3, c.out))
  elseif cmd == "eval" then
    local path = opts.model or cli.usage_error(SPEC, "eval: --model FILE is required")
    local model, meta = s2s.load_model(path, { heads = opts.heads, image_size = opts.image_size })
    local halting = opts.halting
    if halting == true then halting = meta.halting and al.json.decode(meta.halting) or {} end
    local c = { dataset = opts.dataset or preset.dataset or "cifar10", test_limit = opts.limit, image_size = model.image_size }
    local _, te = s2s.distilling.datasets(c)
    local r = s2s.evaluate(model, te, { halting = halting, mode = opts.mode })
    print(("%s on %s (%d examples): accuracy %.4f, keep rate %.3f (per layer %s), %.3f ms/img"):format(path, c.dataset, r.n,
      r.accuracy, r.mean_keep_rate, fmt_rates(r.keep_rate), r.s_per_example * 1e3))
  elseif cmd == "bench" then
    local c = s2s.deep_merge(preset.resolution or {}, {})
    for _, k in ipairs({ "sizes", "keep_rate", "keep_rates", "batch", "iters", "mixer", "dim", "depth", "heads", "patch", "model" }) do
      if opts[k] ~= nil then c[k] = opts[k] end
    end
    if type(c.sizes) == "number" then c.sizes = { c.sizes } end
    if type(c.keep_rates) == "number" then c.keep_rates = { c.keep_rates } end   -- a one-layer schedule
    local function ints(k, v)   -- a measurement over nothing must not become a record
      if v == nil then return end
      local okv = type(v) == "table" and #v > 0
      for _, x in ipairs(type(v) == "table" and v or {}) do okv = okv and math.type(x) == "integer" and x > 0 end
      if not okv then cli.usage_error(SPEC, ("bench: --%s needs positive integers like 224,384, got '%s'"):format(k, tostring(opts[k] or v))) end
    end
    ints("sizes", c.sizes)
    -- every value is checked before the first timing: a bad one must not become a record
    -- (nor an internal error halfway through the bench)
    for _, k in ipairs({ "batch", "iters", "dim", "depth", "heads", "patch" }) do
      local v = c[k]
      if v ~= nil and (math.type(v) ~= "integer" or v < 1) then
        cli.usage_error(SPEC, ("bench: --%s needs a positive integer, got '%s'"):format(k, tostring(v)))
      end
    end
    local function rate_ok(x) return type(x) == "number" and x > 0 and x <= 1 end   -- NaN fails both
    if c.keep_rate ~= nil and not rate_ok(c.keep_rate) then
      cli.usage_error(SPEC, ("bench: --keep_rate needs a keep rate in (0, 1], got '%s'"):format(tostring(opts.keep_rate or c.keep_rate)))
    end
    if c.keep_rates ~= nil then
      local kr = c.keep_rates
      local okr = type(kr) == "table" and #kr > 0
      for _, x in ipairs(type(kr) == "table" and kr or {}) do okr = okr and rate_ok(x) end
      if not okr then
        cli.usage_error(SPEC, ("bench: --keep_rates needs one keep rate in (0, 1] per layer like 1,0.9,0.8, got '%s'")
          :format(type(kr) == "table" and table.concat(kr, ",") or tostring(kr)))
      end
      -- one rate per layer: the shape is known here unless --model names a file
      local depth = not c.model and (c.depth or 12)
      if depth and #kr ~= depth then
        cli.usage_error(SPEC, ("bench: --keep_rates needs one keep rate per layer (%d), got %d"):format(depth, #kr))
      end
    end
    c.out = opts.record or (out .. "/resolution.json")
    do   -- the record is written after the timings: a path that cannot take it is said now
      local util = require "attnlab.util"
      local dir = c.out:match("^(.*)/[^/]+$")
      if dir then util.mkdir_p(dir) end
      local can, why = util.writable_path(c.out)
      if not can then cli.usage_error(SPEC, ("bench: cannot write the record to %s: %s"):format(c.out, why)) end
    end
    c.progress = true
    local r = s2s.resolution_bench(c)
    print(("keep schedule %s; replaced layers %s; %d thread(s); record %s"):format(fmt_rates(r.keep_rates),
      table.concat(r.layers, ","), r.threads, c.out))
  else
    cli.usage_error(SPEC, "unknown subcommand '" .. tostring(cmd) .. "'")
  end
end

cli.protect(SPEC, run)
