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
  usage = "bin/attnlab scripts/distill.lua teacher|avit|run|eval|bench [--preset FILE] [--quick] [--key value ...]\n" ..
          "       (teacher requires --preset)",
  about = "The S2S pipeline, one subcommand per step:\n" ..
          "  teacher  train the dense teacher (or fine-tune a timm checkpoint given as --init)\n" ..
          "  avit     fine-tune the teacher into an A-ViT at --keep_rate\n" ..
          "  run      distill a student: --teacher FILE --strategy layer_aware:3 [--mixer bimamba|bilstm]\n" ..
          "  eval     accuracy and keep rate of --model FILE on --dataset\n" ..
          "  bench    throughput of dense / A-ViT / S2S forward passes vs resolution\n" ..
          "Any preset key can be overridden: --distill.stage1.epochs 3, --train_limit 2000, --halting '{...}'.",
  positional = { { "SUBCOMMAND", "teacher | avit | run | eval | bench" } },
  options = {
    { "preset", "FILE", "an S2S preset (experiments/s2s/*.lua); required by teacher" },
    { "quick", nil, "merge the preset's quick table (a smoke run of the pipeline)" },
    { "out", "DIR", "output folder (default: the preset's out, else results/s2s)" },
    { "threads", "N", "threads" },
    { "dataset", "NAME", "teacher, avit, run, eval: dataset" }, { "epochs", "E", "teacher, avit: epochs" },
    { "seed", "K", "teacher, avit, run: seed" },
    { "train_limit", "N", "teacher, avit, run: training examples" }, { "test_limit", "N", "teacher, avit, run: test examples" },
    { "lr", "LR", "teacher, avit, run: learning rate" }, { "batch_size", "B", "teacher, avit, run: batch size" },
    { "init", "FILE", "teacher: fine-tune this timm checkpoint" },
    { "save", "FILE", "teacher: model file" }, { "record", "FILE", "teacher, bench: JSON record" },
    { "progress", "BOOL", "teacher, avit, run: progress lines (default true)" },
    { "keep_rate", "R", "avit: target keep rate; bench: mean keep rate of the schedule" }, { "teacher", "FILE", "avit, run: the teacher model file" },
    { "halting", "JSON|true", "halting settings (avit) / masks (eval)" }, { "name", "NAME", "avit, run: output name" },
    { "strategy", "NAME", "run: uniform | groupwise:<group> | layer_aware[:k] | sparsest[:k]" },
    { "layers", "L,L", "run: replace these layers (instead of --strategy; '[]': none)" }, { "mixer", "NAME", "run, bench: bimamba | bilstm" },
    { "profile", "FILE", "run: the teacher's profile.json (sparsest[:k])" },
    { "teacher_halting", "BOOL", "run: distill under the teacher's halting masks" },
    { "eval_limit", "N", "run: evaluation examples" },
    { "model", "FILE", "eval: the model file; bench: model shape" },
    { "heads", "N", "heads of a timm file whose metadata lacks them (teacher --init, avit, run, eval); bench: heads" },
    { "image_size", "S", "eval: image size of a timm file" }, { "limit", "N", "eval: test examples" },
    { "mode", "NAME", "eval: gather | masked" },
    { "sizes", "S,S", "bench: resolutions" }, { "keep_rates", "R,R", "bench: keep rates" }, { "batch", "B", "bench: batch" },
    { "iters", "N", "bench: timed iterations" }, { "dim", "D", "bench: width" }, { "depth", "L", "bench: depth" },
    { "patch", "P", "bench: patch size" },
  },
  more_options = { "  --teacher.KEY, --avit.KEY, --distill.KEY, --resolution.KEY VALUE   override a key of the preset section",
                   "      the subcommand reads (teacher, avit, run, bench); a subcommand refuses an option it does not read" },
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
local K = s2s.check
local preset, out

-- ---- the options each subcommand reads ----------------------------------------------------------
-- Any other is refused: an option a subcommand does not read would be silently ignored, and
-- its record would not say what was asked (teacher --lr, eval --epochs, bench --layers).
-- `teacher` is the teacher's model file for avit and run, and the preset's teacher section
-- (--teacher.KEY) for the teacher subcommand. eval writes nothing but takes --out, as every
-- subcommand does, so that one --out can go to each step of a pipeline.
local USES = {}
for c, list in pairs({
  teacher = "dataset epochs seed train_limit test_limit lr batch_size init save record progress heads teacher",
  avit = "dataset epochs seed train_limit test_limit lr batch_size keep_rate teacher halting name progress heads avit",
  run = "dataset seed train_limit test_limit lr batch_size teacher strategy layers mixer profile teacher_halting " ..
        "eval_limit name progress heads distill",
  eval = "dataset model heads image_size limit halting mode",
  bench = "record model sizes keep_rate keep_rates batch iters mixer dim depth heads patch resolution",
}) do
  USES[c] = { preset = true, quick = true, out = true, threads = true }
  for k in list:gmatch("%S+") do USES[c][k] = true end
end

-- ---- the options' values, checked before any work (each one line naming the option) ------------
local function bad(msg) cli.usage_error(SPEC, cmd .. ": " .. msg) end
for _, k in ipairs(require("attnlab.util").sorted_keys(opts)) do
  if not USES[cmd][k] then
    local takes = {}
    for _, o in ipairs(SPEC.options) do if USES[cmd][o[1]] then takes[#takes + 1] = "--" .. o[1] end end
    bad(("--%s is not an option of %s (it takes %s%s)"):format(k, cmd, table.concat(takes, ", "),
      cmd == "teacher" and ", --teacher.KEY" or cmd == "avit" and ", --avit.KEY" or cmd == "run" and ", --distill.KEY"
      or cmd == "bench" and ", --resolution.KEY" or ""))
  end
end
-- what each option's value must be: s2s/check.lua's kinds, the ones the preset keys they set have
local KIND = { preset = "path", out = "folder", threads = "posint", dataset = "dataset", epochs = "posint",
  seed = "posint", train_limit = "posint", test_limit = "posint", lr = "posnum", batch_size = "posint", init = "path",
  save = "path", record = "path", progress = "bool", keep_rate = "rate", profile = "path", eval_limit = "posint",
  model = "path", heads = "posint", image_size = "posint", limit = "posint", mode = "mode", strategy = "strategy",
  layers = "layers", mixer = "mixer", teacher_halting = "halting_or_bool", sizes = "posints", batch = "posint",
  iters = "posint", dim = "posint", depth = "posint", patch = "posint",
  teacher = cmd ~= "teacher" and "model" or nil, halting = cmd == "avit" and "halting" or "halting_or_bool" }
local function check_value(k)
  local v = opts[k]
  if v == nil or not KIND[k] then return end
  local p, why = K.check({ name = cmd, keys = { [k] = KIND[k] } }, { [k] = v })
  if p or why then bad(K.option_message("--" .. p, why, v)) end
end
if opts.quick ~= nil and type(opts.quick) ~= "boolean" then
  bad(("--quick takes no value (or true/false), got %s"):format(K.show(opts.quick)))
end
-- (--name, --keep_rates and --halting say more than their kind)
if opts.name ~= nil then
  -- NAME becomes <out>/students/NAME.* (or <out>/NAME.*): a name must not lead out of that folder
  local n = opts.name
  if n == true then bad("--name needs a value (a plain file name)") end
  if type(n) ~= "string" or n == "" or n:find("/", 1, true) or n:find("..", 1, true) then
    bad(("--name needs a plain file name (no '/' or '..'), got %s"):format(K.show(n)))
  end
end
if cmd == "teacher" and opts.teacher ~= nil and type(opts.teacher) ~= "table" then
  bad(("--teacher FILE is the teacher model of avit and run; teacher takes the preset's teacher keys as " ..
    "--teacher.KEY VALUE (and --init FILE to fine-tune a checkpoint), got --teacher %s"):format(K.show(opts.teacher)))
end
if cmd ~= "teacher" and type(opts.teacher) == "table" then
  bad(("--teacher needs the teacher's model file, got %s (--teacher.KEY settings are the teacher subcommand's)")
    :format(K.show(opts.teacher)))
end
if cmd == "bench" and opts.keep_rates ~= nil then
  local kr = opts.keep_rates
  if type(kr) == "number" then kr = { kr } end   -- a one-layer schedule
  local okr = type(kr) == "table" and #kr > 0
  for _, x in ipairs(type(kr) == "table" and kr or {}) do okr = okr and type(x) == "number" and x > 0 and x <= 1 end
  if not okr then
    bad(("--keep_rates needs one keep rate in (0, 1] per layer like 1,0.9,0.8, got %s"):format(K.show(opts.keep_rates)))
  end
end
for _, k in ipairs(require("attnlab.util").sorted_keys(KIND)) do check_value(k) end
-- teacher trains a model from the preset's teacher section: no default preset is documented,
-- and without one it would start a full run of al.train's defaults nobody asked for
if cmd == "teacher" and opts.preset == nil then
  bad("--preset FILE is required (an S2S preset, e.g. experiments/s2s/cifar_small.lua; its teacher section is the model trained)")
end
-- (without a preset there is no quick table: --quick was accepted and did nothing)
if opts.quick == true and opts.preset == nil then bad("--quick goes with --preset FILE (it applies the preset's quick table)") end
if cmd == "run" and opts.strategy ~= nil and opts.layers ~= nil then
  bad("--strategy and --layers both choose the layers to replace: give one")
end
-- the preset section a subcommand reads, whose keys --SECTION.KEY sets (checked once the preset
-- is read, over it: which keys a teacher takes depends on its init)
local SECTION = { teacher = "teacher", avit = "avit", run = "distill", bench = "resolution" }
local sec_name = SECTION[cmd]
if sec_name and opts[sec_name] ~= nil and type(opts[sec_name]) ~= "table" and cmd ~= "teacher" then
  bad(("--%s takes the preset's %s keys as --%s.KEY VALUE, got --%s %s"):format(sec_name, sec_name, sec_name, sec_name,
    K.show(opts[sec_name])))
end
if cmd == "avit" and type(opts.avit) == "table" and (opts.avit.keep_rates ~= nil or opts.avit.main_keep_rate ~= nil) then
  bad("--avit.keep_rates and --avit.main_keep_rate are the study's (s2s_strategies.lua); avit trains one: --keep_rate R")
end

local function fmt_rates(r)
  local t = {}
  for i, v in ipairs(r or {}) do t[i] = ("%.2f"):format(v) end
  return table.concat(t, " ")
end

-- A bad key of the subcommand's config (the preset's section with the command line over it),
-- named as the user gave it: the option (--lr, --distill.stage2.epochs), else the preset's key.
-- flat: config key -> the option that sets it, where they differ (out: --record).
local function report(p, why, flat)
  local top = p and p:match("^[^.%[]+")
  local o = top and ((flat or {})[top] or (USES[cmd][top] and top))
  if o and opts[o] ~= nil and o ~= sec_name then
    bad(K.option_message("--" .. o .. p:sub(#top + 1), why, type(opts[o]) == "table" and K.dig(opts[o], p:sub(#top + 2)) or opts[o]))
  end
  if p and sec_name and K.dig(opts[sec_name], p) ~= nil then
    bad(K.option_message("--" .. sec_name .. "." .. p, why, K.dig(opts[sec_name], p)))
  end
  if p and sec_name and opts.preset and K.dig(preset[sec_name], p) ~= nil then
    cli.die(SPEC, ("%s: preset %s: %s"):format(cmd, opts.preset, K.phrase(sec_name .. "." .. p, why)), 2)
  end
  -- not given anywhere (a key a rule wants): the option that would give it, if any
  bad(K.phrase(top and USES[cmd][top] and ("--" .. p) or p, why))
end
local function check_config(sch, c, flat)
  local p, why = K.check(sch, c)
  if p or why then report(p, why, flat) end
  return c
end
-- the preset's section, the command line's --SECTION.KEY values merged over it, checked key by
-- key (the rules joining keys are checked on the whole config, once the options are in)
local function section()
  local sp = preset[sec_name]
  if cmd == "teacher" then   -- --init FILE over a preset that trains its teacher: the file's shape
    sp = K.teacher_base(sp, opts.init or (type(opts.teacher) == "table" and opts.teacher.init or nil))
  end
  if sp ~= nil and type(sp) ~= "table" then
    cli.die(SPEC, ("%s: preset %s: %s needs a table of settings, got %s"):format(cmd, opts.preset, sec_name, K.show(sp)), 2)
  end
  local sec = s2s.deep_merge(sp or {}, opts[sec_name] or {})
  local sch = K.SCHEMAS[sec_name]
  local p, why = K.check(sch, sec, { partial = true })
  if p or why then report(p, why) end
  return sec
end
-- The files a subcommand writes during or after training ({path, what} pairs). check_outputs,
-- before the teacher is read: a path that cannot take its file is said now, not after the first
-- epoch (one line naming the file or folder), and nothing is created. make_outputs, once every
-- input has been checked (s2s.avit / s2s.distill call it, as opts.ready, before reading any
-- data): the folders are made and the paths checked again. So a run refused for its inputs (a
-- strategy the teacher's depth cannot take, a profile of another model) leaves no folder behind.
local function check_outputs(files)
  local util = require "attnlab.util"
  for _, f in ipairs(files) do
    local dir = f[1]:match("^(.*)/[^/]+$")
    if dir and dir ~= "" and not util.is_dir(dir) then
      -- the folder would be made (util.can_create_dir)
      if not util.can_create_dir(dir) then die(("%s: cannot create the folder %s"):format(cmd, dir)) end
    else
      local can, why = util.writable_path(f[1])
      if not can then cli.die(SPEC, ("%s: cannot write the %s to %s: %s"):format(cmd, f[2], f[1], why), 2) end
    end
  end
end
local function make_outputs(files)
  local util = require "attnlab.util"
  for _, f in ipairs(files) do
    local dir = f[1]:match("^(.*)/[^/]+$")
    if dir and dir ~= "" and not util.mkdir_p(dir) then die(("%s: cannot create the folder %s"):format(cmd, dir)) end
    local can, why = util.writable_path(f[1])
    if not can then cli.die(SPEC, ("%s: cannot write the %s to %s: %s"):format(cmd, f[2], f[1], why), 2) end
  end
end
-- How the dataset in use was chosen, for the messages of s2s.distilling.check_dataset (a teacher
-- or model trained on another dataset is refused in one line before any data is read), and
-- whether the user chose it: a model recorded as trained on another dataset of the same images
-- (KMNIST vs Fashion-MNIST) is their choice when they named the dataset (--dataset, or
-- --SECTION.dataset), not when it came from the preset or the default. dataset: the name in
-- use (nil: al.train's default).
local function dataset_source(dataset)
  local name = dataset or al.train.DEFAULTS.dataset
  local sec = SECTION[cmd]
  local sec_given = sec and type(opts[sec]) == "table" and opts[sec].dataset ~= nil
  local from
  if opts.dataset ~= nil then from = "--dataset " .. name
  elseif sec_given then from = ("--%s.dataset %s"):format(sec, name)
  elseif dataset ~= nil and opts.preset then from = ("the preset's dataset %s"):format(name)
  else from = "the default dataset " .. name end
  return { dataset_from = from, dataset_chosen = opts.dataset ~= nil or sec_given or false }
end

-- A checkpoint of another configuration: fit's advice names no option of this script, where
-- the checkpoint's path comes from these.
local CHECKPOINT_FROM = { teacher = "--out (or --teacher.checkpoint)", avit = "--name or --out", run = "--name or --out" }
local function pipeline(f, ...) return (K.with_checkpoint_advice(CHECKPOINT_FROM[cmd], f, ...)) end

local function run()
  preset = opts.preset and s2s.load_preset(opts.preset, opts.quick) or {}
  -- the whole preset, as s2s_strategies.lua checks it, before any work: a misspelt key
  -- (teachr = {...}) would otherwise be ignored and its defaults trained, and a file that is
  -- no preset (a sweep's experiment table) would be run as one. The section this subcommand
  -- reads is checked by section() and check_config below instead, with the command line's
  -- --SECTION.KEY values and --init merged over it (a teacher fine-tuned from --init FILE takes
  -- another section's keys), each bad key named as the user gave it.
  if opts.preset then
    local whole = {}
    for k, v in pairs(preset) do whole[k] = v end
    if sec_name then whole[sec_name] = nil end
    local p, why = K.preset_problem(whole)
    if p or why then cli.die(SPEC, ("%s: preset %s: %s"):format(cmd, opts.preset, K.phrase(p, why)), 2) end
  end
  out = opts.out or preset.out or "results/s2s"
  if opts.threads then al.set_num_threads(opts.threads) end
  if cmd == "teacher" then
    local c = section()
    for _, k in ipairs({ "epochs", "dataset", "init", "seed", "train_limit", "test_limit", "heads", "lr", "batch_size" }) do
      if opts[k] ~= nil then c[k] = opts[k] end
    end
    c.save = opts.save or (out .. "/teacher.safetensors")
    c.out = opts.record or (out .. "/teacher.json")
    c.checkpoint = c.checkpoint or (out .. "/teacher.ckpt")
    c.progress = opts.progress ~= false
    check_config("teacher_config", c, { out = "record" })
    if not require("attnlab.util").mkdir_p(out) then die(("teacher: cannot create the folder %s"):format(out)) end
    -- the model file and the record are written after training: a path that cannot take them
    -- is said now
    for _, f in ipairs({ { c.save, "model" }, { c.out, "record" } }) do
      local can, why = require("attnlab.util").writable_path(f[1])
      if not can then cli.die(SPEC, ("teacher: cannot write the %s to %s: %s"):format(f[2], f[1], why), 2) end
    end
    local rec = pipeline(s2s.train_teacher, c)
    print(("teacher: test accuracy %.4f, saved %s"):format(rec.test_accuracy, c.save))
    if s2s.init_is_scheme(c.init) then s2s.write_json(c.out, rec) end
  elseif cmd == "avit" then
    local c = section()
    local kr = opts.keep_rate or c.main_keep_rate or s2s.main_keep_rate(preset)
    c.keep_rates, c.main_keep_rate = nil, nil
    c.dataset = opts.dataset or c.dataset or preset.dataset
    c.train_limit, c.test_limit = opts.train_limit or preset.train_limit, opts.test_limit or preset.test_limit
    c.halting = s2s.deep_merge(c.halting or {}, opts.halting or {})
    c.halting.keep_rate = kr
    c.teacher = opts.teacher or (out .. "/teacher.safetensors")
    local name = opts.name or ("avit_k" .. kr)
    c.save = out .. "/" .. name .. ".safetensors"
    c.out = out .. "/" .. name .. ".json"
    c.checkpoint = out .. "/" .. name .. ".ckpt"
    c.progress = opts.progress ~= false
    for _, k in ipairs({ "epochs", "lr", "seed", "batch_size", "heads" }) do if opts[k] ~= nil then c[k] = opts[k] end end
    check_config("avit_config", c)
    local files = { { c.save, "model" }, { c.out, "record" }, { c.checkpoint, "checkpoint" } }
    check_outputs(files)
    local src = dataset_source(c.dataset)
    src.ready = function() make_outputs(files) end
    local rec = pipeline(s2s.avit, c, src)
    print(("A-ViT (target keep rate %.2f): accuracy %.4f (dense teacher %.4f), keep rate %.3f, per layer %s")
      :format(kr, rec.test_accuracy, rec.dense_accuracy, rec.mean_keep_rate, fmt_rates(rec.keep_rate)))
    print(("  inference: gathered %.3f ms/img, masked %.3f ms/img, dense %.3f ms/img; record %s")
      :format(rec.s_per_example * 1e3, rec.s_per_example_masked * 1e3, rec.dense_s_per_example * 1e3, c.out))
  elseif cmd == "run" then
    local c = section()
    c.dataset = opts.dataset or c.dataset or preset.dataset
    c.train_limit, c.test_limit = opts.train_limit or preset.train_limit, opts.test_limit or preset.test_limit
    c.teacher = opts.teacher or c.teacher or cli.usage_error(SPEC, "run: --teacher FILE is required (a teacher or A-ViT model file)")
    -- the layers: a command line's choice (--strategy or --layers) replaces the preset's
    if opts.strategy ~= nil or opts.layers ~= nil then
      local od = type(opts.distill) == "table" and opts.distill or {}
      c.strategy, c.layers = opts.strategy or od.strategy, opts.layers or od.layers
    end
    if type(c.layers) == "number" then c.layers = { c.layers } end
    c.mixer = opts.mixer or c.mixer
    c.profile = opts.profile or c.profile
    if opts.teacher_halting ~= nil then c.teacher_halting = opts.teacher_halting end
    for _, k in ipairs({ "lr", "seed", "batch_size", "eval_limit", "heads" }) do if opts[k] ~= nil then c[k] = opts[k] end end
    check_config("distill_config", c)
    local mixer_name = type(c.mixer) == "table" and c.mixer.name or c.mixer or "bimamba"
    local name = opts.name or (((c.strategy or "layers") .. "_" .. mixer_name):gsub("[^%w_.%-]", "_"))
    local dir = out .. "/students"
    c.save = dir .. "/" .. name .. ".safetensors"
    c.out = dir .. "/" .. name .. ".json"
    c.checkpoint = dir .. "/" .. name .. ".ckpt"
    c.progress = opts.progress ~= false
    local files = { { c.save, "model" }, { c.out, "record" }, { c.checkpoint, "checkpoint" } }
    check_outputs(files)
    local src = dataset_source(c.dataset)
    src.ready = function() make_outputs(files) end
    local rec = pipeline(s2s.distill, c, src)
    print(("S2S student %s (layers %s -> %s): accuracy %.4f, teacher %.4f (gap %.4f); keep rate %.3f (teacher %.3f)")
      :format(name, table.concat(rec.layers, ","), mixer_name, rec.test_accuracy, rec.teacher_accuracy, rec.accuracy_gap,
        rec.mean_keep_rate, rec.teacher_mean_keep_rate))
    print(("  params %d (teacher %d); %.3f ms/img (teacher %.3f); record %s"):format(rec.student_params, rec.teacher_params,
      rec.s_per_example * 1e3, rec.teacher_s_per_example * 1e3, c.out))
  elseif cmd == "eval" then
    local path = opts.model or cli.usage_error(SPEC, "eval: --model FILE is required")
    local model, meta = s2s.load_model(path, { heads = opts.heads, image_size = opts.image_size })
    local halting = opts.halting
    if halting == true then
      -- the file's own halting; a file without one (a dense teacher) would be evaluated
      -- densely under a --halting the user asked for
      halting = s2s.distilling.file_halting(meta, path)
      if not halting then die(("eval: %s has no halting config (not an A-ViT file): pass --halting '{...}'"):format(path)) end
    end
    -- the dataset: --dataset, the preset's, else the one the file records it was trained on
    local dataset = opts.dataset or preset.dataset or s2s.distilling.recorded_dataset(meta) or "cifar10"
    -- the model must take its images (distilling.check_dataset), before the data are read
    s2s.distilling.check_dataset(model, meta, dataset, { what = "model", path = path, explicit = opts.dataset ~= nil,
      dataset_from = (opts.dataset and "--dataset " or preset.dataset and "the preset's dataset " or "the default dataset ") .. dataset })
    local c = { dataset = dataset, test_limit = opts.limit, image_size = model.image_size }
    local _, te = s2s.distilling.datasets(c)
    local r = s2s.evaluate(model, te, { halting = halting, mode = opts.mode })
    print(("%s on %s (%d examples): accuracy %.4f, keep rate %.3f (per layer %s), %.3f ms/img"):format(path, c.dataset, r.n,
      r.accuracy, r.mean_keep_rate, fmt_rates(r.keep_rate), r.s_per_example * 1e3))
  elseif cmd == "bench" then
    local c = section()
    for _, k in ipairs({ "sizes", "keep_rate", "keep_rates", "batch", "iters", "mixer", "dim", "depth", "heads", "patch", "model" }) do
      if opts[k] ~= nil then c[k] = opts[k] end
    end
    c.out = opts.record or (out .. "/resolution.json")
    c.progress = true
    -- every value is checked before the first timing: a bad one must not become a record
    -- (nor an internal error halfway through the bench); resolution_bench's own check
    check_config("resolution_config", c, { out = "record" })
    K.lists("resolution_config", c)
    do   -- the record is written after the timings: a path that cannot take it is said now
      local util = require "attnlab.util"
      local dir = c.out:match("^(.*)/[^/]+$")
      if dir then util.mkdir_p(dir) end
      local can, why = util.writable_path(c.out)
      if not can then cli.usage_error(SPEC, ("bench: cannot write the record to %s: %s"):format(c.out, why)) end
    end
    local r = s2s.resolution_bench(c)
    print(("keep schedule %s; replaced layers %s; %d thread(s); record %s"):format(fmt_rates(r.keep_rates),
      table.concat(r.layers, ","), r.threads, c.out))
  else
    cli.usage_error(SPEC, "unknown subcommand '" .. tostring(cmd) .. "'")
  end
end

cli.protect(SPEC, run)
