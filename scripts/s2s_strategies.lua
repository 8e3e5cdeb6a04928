-- scripts/s2s_strategies.lua -- the S2S study's experiments from one preset: which layers
-- to replace (uniform, group-wise, layer-aware, sparsest-k), under which teacher.
--
--   bin/attnlab scripts/s2s_strategies.lua EXPERIMENT --preset experiments/s2s/cifar_small.lua [--quick]
--
-- EXPERIMENT:
--   groupwise   1. group-wise replacement (shallow / middle / deep groups of equal size,
--                  same training budget): accuracy drop vs mean sparsity of the group, under
--                  the A-ViT and/or the dense teacher (groupwise.teachers)
--   keeprate    2. teacher keep-rate sweep: student-teacher accuracy gap vs teacher sparsity,
--                  with a control whose own keep rate is held fixed (keeprate.own_keep_control)
--   layeraware  3. layer-aware (k deepest), sparsest-k and uniform (every layer) students vs
--                  the A-ViT teacher at matched keep rates: accuracy, parameters, latency
--   uniform        only the uniform student
--   latency     3b. the experiment-3 models' latency re-measured in one run, round-robin
--   resolution  4. throughput of dense / A-ViT / S2S at 224^2 and 384^2 (patch 16); the
--                  summary adds the trained models' latency at their own token count
-- Experiments 1-3 train each student at every seed of the preset's `seeds`; the summary
-- gives mean +- sd over seeds and paired t-tests against each table's control.
--   teachers    only the prerequisites: the teacher, its profile and every A-ViT (on a
--                  2-core machine run this with --threads 2 first, then two experiments at
--                  once with --threads 1 each: every step is locked, none runs twice)
--   all         the teacher, its profile, every A-ViT, then 1-4, then the summary
--   summary     rebuild <out>/summary.md from the records present
-- Every step is skipped when its record exists; training runs checkpoint per epoch and
-- resume, so an interrupted study continues where it stopped. Records: <out>/*.json,
-- <out>/students/*.json; tables: <out>/summary.md. A record made with other settings (another
-- --distill.lr, --train_limit, preset) is refused in one line naming the setting, never
-- reused: choose a new --out, or pass --redo-changed to move it (and its model and checkpoint)
-- to <out>/set_aside/<time>/ and redo that step.
-- This file parses the command line and dispatches: the experiments are
-- experiments/s2s/study.lua, their cached prerequisites lua/attnlab/s2s/study.lua, the
-- summary writer lua/attnlab/s2s/summary.lua.
local al = require "attnlab"
local s2s = require "attnlab.s2s"

local cli = al.cli
local EXPERIMENTS = { groupwise = true, keeprate = true, layeraware = true, uniform = true, latency = true,
                      resolution = true, teachers = true, all = true, summary = true }
local SPEC = {
  name = "s2s_strategies.lua",
  usage = "bin/attnlab scripts/s2s_strategies.lua groupwise|keeprate|layeraware|uniform|latency|resolution|teachers|all|summary " ..
          "--preset FILE [--quick] [--key value ...]",
  about = "The S2S study's experiments from one preset: which layers to replace (uniform, group-wise,\n" ..
          "layer-aware, sparsest-k), under which teacher. Finished steps are skipped; training resumes.",
  positional = { { "EXPERIMENT", "groupwise | keeprate | layeraware | uniform | latency | resolution | teachers | all | summary" } },
  options = {
    { "preset", "FILE", "an S2S preset (experiments/s2s/*.lua); required" },
    { "quick", nil, "merge the preset's quick table" },
    { "threads", "N", "threads" },
    { "redo-changed", nil, "set aside the records made with other settings (to <out>/set_aside/) and redo those steps" },
  },
  more_options = { "  --KEY VALUE, --SECTION.KEY VALUE   override a preset key (e.g. --out DIR, --distill.lr 1e-3,",
                   "      --latency.repeats 9; lua/attnlab/s2s/check.lua lists every key and what it takes)" },
  examples = { "bin/attnlab scripts/s2s_strategies.lua layeraware --preset experiments/s2s/cifar_small.lua --quick" },
}
cli.help_requested(SPEC, arg)
local function die(msg) cli.die(SPEC, msg) end

local exp = arg[1]
if not exp then cli.usage_error(SPEC, "no EXPERIMENT given") end
if not EXPERIMENTS[exp] then cli.usage_error(SPEC, ("unknown experiment '%s'"):format(exp)) end
-- --redo-changed is the script's flag (cli.parse_pairs takes no dash in a key): taken out first
local argv, redo_changed = {}, false
for i = 1, #arg do
  if arg[i] == "--redo-changed" then redo_changed = true else argv[#argv + 1] = arg[i] end
end
local opts, words = cli.parse_pairs(argv, 2, SPEC)
cli.check_words(SPEC, words)
if opts.redo_changed ~= nil then   -- (the underscore spelling too)
  if type(opts.redo_changed) ~= "boolean" then
    cli.usage_error(SPEC, ("--redo-changed takes no value, got %s"):format(s2s.check.show(opts.redo_changed)))
  end
  redo_changed = redo_changed or opts.redo_changed
  opts.redo_changed = nil
end
local K = s2s.check
-- ---- the command line's values, checked before the preset is read or anything runs --------------
-- --preset and --quick are the script's, --threads the process's; every other key overrides the
-- preset's (a section key, --distill.lr 1e-3, or a top-level one, --out DIR) and is checked as
-- the preset's value would be (s2s/check.lua), so that a misspelt or untyped value is one line
-- naming the option, never a traceback from the merge or an error hours into the study.
if opts.preset == nil then cli.usage_error(SPEC, "--preset FILE is required") end
if opts.preset == true then cli.usage_error(SPEC, "--preset needs a value (FILE)") end
if type(opts.preset) ~= "string" then cli.usage_error(SPEC, ("--preset needs a file name, got %s"):format(K.show(opts.preset))) end
if opts.quick ~= nil and type(opts.quick) ~= "boolean" then
  cli.usage_error(SPEC, ("--quick takes no value (or true/false), got %s"):format(K.show(opts.quick)))
end
if opts.threads ~= nil and (math.type(opts.threads) ~= "integer" or opts.threads < 1) then
  cli.usage_error(SPEC, ("--threads needs a positive integer, got %s"):format(K.show(opts.threads)))
end
local overrides = {}
for k, v in pairs(opts) do if k ~= "preset" and k ~= "quick" and k ~= "threads" then overrides[k] = v end end
do   -- (the teacher's keys depend on its init, maybe the preset's: checked once merged, below)
  local early = {}
  for k, v in pairs(overrides) do if k ~= "teacher" then early[k] = v end end
  local p, why = K.check("preset", early, { partial = true })
  if p or why then
    local name = "--" .. p
    if why:match("^is not a key of a preset") then cli.usage_error(SPEC, "unknown option " .. name) end
    cli.usage_error(SPEC, K.option_message(name, why, K.dig(overrides, p)))
  end
end
local okp, preset = pcall(s2s.load_preset, opts.preset, opts.quick)
if not okp then die(preset) end
-- A preset built on another (dofile(...) then its own p.out) inherits that preset's quick.out
-- ("<its out>_quick") unless it sets its own: --quick would then write into the other
-- preset's quick folder and mix the two studies' records. The quick folder of a preset is
-- "<out>_quick" by convention (every preset in experiments/s2s/): a quick.out of that form
-- made from ANOTHER out is taken as inherited, and this preset's own out wins.
if opts.quick and overrides.out == nil then
  local okf, full = pcall(s2s.load_preset, opts.preset, false)
  local own, qout = okf and full.out, preset.out
  if type(own) == "string" and type(qout) == "string" and qout ~= own then
    local stem = qout:match("^(.*)_quick$")
    if stem and stem ~= own then
      preset.out = own .. "_quick"
      print(("[s2s] --quick: the preset's quick.out %s belongs to the out %s of the preset it builds on; writing to %s (set quick.out in %s to choose)")
        :format(qout, stem, preset.out, opts.preset))
    end
  end
end
-- the overrides over the preset by the rule of its quick table (util.deep_merge): a section
-- merges key by key, a list or a value replaces
if type(overrides.teacher) == "table" then   -- --teacher.init FILE: the checkpoint's shape, not the preset's
  preset.teacher = K.teacher_base(preset.teacher, overrides.teacher.init)
end
preset = s2s.deep_merge(preset, overrides)
K.lists("preset", preset)
do   -- the whole preset, overrides merged: a preset's own bad value, or keys that disagree
  local p, why = K.check("preset", preset)
  if p or why then
    local given = p and K.dig(overrides, p) ~= nil
    local msg = K.phrase(p and (given and ("--" .. p) or ("preset " .. opts.preset .. ": " .. p)), why)
    if given then cli.usage_error(SPEC, msg) end
    cli.die(SPEC, msg, 2)
  end
end
local out = preset.out or "results/s2s"
if opts.threads then al.set_num_threads(opts.threads) end
-- every experiment ends in <out>/summary.md: a folder that cannot hold it is said now, before
-- any training (not as a mkdir message followed by a "wrote" that did not happen). Checked
-- before anything is created: the folder, else its nearest existing parent, must take files.
do
  local util = require "attnlab.util"
  local function refuse()
    cli.usage_error(SPEC, ("cannot create the output folder %s/students (is %s a writable folder?)"):format(out, out))
  end
  if util.is_dir(out) then
    local can, why = util.writable_path(out .. "/summary.md")
    if not can then cli.usage_error(SPEC, ("cannot write %s/summary.md: %s"):format(out, why)) end
  elseif not util.can_create_dir(out) then
    refuse()
  end
  -- summary only rebuilds summary.md from the records present: with none (an empty or wrong
  -- --out) it would write a title alone and report success. It creates no folder.
  if exp == "summary" then
    if #require("attnlab.s2s.summary").records_present(out, preset) == 0 then
      die(("summary: no S2S records in %s (teacher.json, avit_k*.json, exp*_*.json, profile/profile.json): run the " ..
        "study's experiments first, or give the --out that holds them"):format(out))
    end
  elseif not util.mkdir_p(out .. "/students") then
    refuse()
  end
end

-- The study's prerequisites and summary (lua/attnlab/s2s/{study,summary}.lua) and its experiments
-- (experiments/s2s/study.lua, read from the checkout or the installed share/attnlab).
opts.redo_changed = redo_changed
local C = require("attnlab.s2s.study").context(preset, out, opts, die)
local E = dofile(al.root() .. "/experiments/s2s/study.lua")(C)

-- the prerequisites every experiment draws on: the teacher, its profile, every A-ViT
local function teachers()
  C.teacher_path()
  C.profile_of(C.teacher_path(), "profile", nil)
  for _, kr in ipairs((preset.avit or {}).keep_rates or { C.main_kr() }) do C.avit_path(kr) end
  C.avit_path(C.main_kr())
end

-- A checkpoint of another configuration: fit's advice names no option of this script, where a
-- step's checkpoint is <out>/<step>.ckpt.
local function run_experiment()
  if exp == "teachers" then
    teachers()
  elseif exp == "all" then
    teachers()
    E.groupwise(); E.keeprate(); E.layeraware(); E.latency(); E.resolution(); E.summary()
  elseif E[exp] then
    if exp ~= "summary" and exp ~= "resolution" and exp ~= "latency" then C.profile_of(C.teacher_path(), "profile", nil) end
    E[exp]()
    if exp ~= "summary" then E.summary() end
  else
    die("unknown experiment '" .. exp .. "'")
  end
end
cli.protect(SPEC, function() K.with_checkpoint_advice("--out (or rerun with --redo-changed to set it aside)", run_experiment) end)
