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
-- <out>/students/*.json; tables: <out>/summary.md.
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
  },
  more_options = { "  --KEY VALUE, --SECTION.KEY VALUE   override a key the preset has (e.g. --out DIR, --distill.lr 1e-3)" },
  examples = { "bin/attnlab scripts/s2s_strategies.lua layeraware --preset experiments/s2s/cifar_small.lua --quick" },
}
cli.help_requested(SPEC, arg)
local function die(msg) cli.die(SPEC, msg) end

local exp = arg[1]
if not exp then cli.usage_error(SPEC, "no EXPERIMENT given") end
if not EXPERIMENTS[exp] then cli.usage_error(SPEC, ("unknown experiment '%s'"):format(exp)) end
local opts, words = cli.parse_pairs(arg, 2, SPEC)
cli.check_words(SPEC, words)
if not opts.preset then cli.usage_error(SPEC, "--preset FILE is required") end
local okp, preset = pcall(s2s.load_preset, opts.preset, opts.quick)
if not okp then die(preset) end
local known = { preset = true, quick = true, threads = true, out = true }
for k in pairs(preset) do known[k] = true end
cli.check_known(SPEC, opts, known)
for k, v in pairs(opts) do if k ~= "preset" and k ~= "quick" then preset[k] = type(v) == "table" and s2s.deep_merge(preset[k], v) or v end end
if opts.threads ~= nil and (math.type(opts.threads) ~= "integer" or opts.threads < 1) then
  cli.usage_error(SPEC, ("--threads needs a positive integer, got '%s'"):format(tostring(opts.threads)))
end
local out = preset.out or "results/s2s"
if type(out) ~= "string" or out == "" then cli.usage_error(SPEC, ("--out needs a folder, got '%s'"):format(tostring(out))) end
if opts.threads then al.set_num_threads(opts.threads) end
-- every experiment ends in <out>/summary.md: a folder that cannot hold it is said now, before
-- any training (not as a mkdir message followed by a "wrote" that did not happen)
do
  local util = require "attnlab.util"
  if not util.mkdir_p(out .. "/students") then
    cli.usage_error(SPEC, ("cannot create the output folder %s/students (is %s a writable folder?)"):format(out, out))
  end
  local can, why = util.writable_path(out .. "/summary.md")
  if not can then cli.usage_error(SPEC, ("cannot write %s/summary.md: %s"):format(out, why)) end
end

-- The study's prerequisites and summary (lua/attnlab/s2s/{study,summary}.lua) and its experiments
-- (experiments/s2s/study.lua, read from the checkout or the installed share/attnlab).
local C = require("attnlab.s2s.study").context(preset, out, opts, die)
local E = dofile(al.root() .. "/experiments/s2s/study.lua")(C)

-- the prerequisites every experiment draws on: the teacher, its profile, every A-ViT
local function teachers()
  C.teacher_path()
  C.profile_of(C.teacher_path(), "profile", nil)
  for _, kr in ipairs((preset.avit or {}).keep_rates or { C.main_kr() }) do C.avit_path(kr) end
  C.avit_path(C.main_kr())
end

cli.protect(SPEC, function()
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
end)
