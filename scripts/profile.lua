-- scripts/profile.lua -- layer-wise sparsity profile of a ViT's attention over a dataset
-- split: per layer and head the attention entropy, effective support (keys holding 90% of
-- the mass), nonzero fraction and top-k mass, and token-interaction heatmaps per layer.
--
--   bin/attnlab scripts/profile.lua --model results/s2s/cifar_small/teacher.safetensors \
--       [--dataset cifar10] [--split test] [--limit 1000] [--halting true] [--out DIR] [--png false]
--   bin/attnlab scripts/profile.lua --preset experiments/s2s/cifar_small.lua [--quick]
--
-- --model: a file from scripts/distill.lua, or any timm ViT safetensors (--heads N unless
-- its metadata records heads, --image_size S, --pos_resample bicubic|bilinear).
-- --halting true profiles under the model's own A-ViT halting masks (the config stored
-- with an A-ViT file; or a JSON object) -- only running tokens count as queries and keys.
-- Writes DIR/profile.json, DIR/profile.txt, DIR/layer<l>.svg (and .png through gnuplot
-- when installed). DIR defaults to <preset out>/profile.
local al = require "attnlab"
local s2s = require "attnlab.s2s"

local cli = al.cli

local SPEC = {
  name = "profile.lua",
  usage = "bin/attnlab scripts/profile.lua --model FILE [--dataset NAME] [--split test|train] [--limit N] " ..
          "[--halting true] [--out DIR] [--png false]\n       bin/attnlab scripts/profile.lua --preset FILE [--quick]",
  about = "Layer-wise sparsity profile of a ViT's attention over a dataset split (entropy, effective support,\n" ..
          "nonzero fraction, top-k mass per layer and head) and token-interaction heatmaps.",
  options = {
    { "model", "FILE", "a safetensors model (from scripts/distill.lua, or any timm ViT)" },
    { "preset", "FILE", "an S2S preset (experiments/s2s/*.lua): its teacher, dataset and profile settings" },
    { "quick", nil, "the preset's quick settings" },
    { "dataset", "NAME", "cifar10 (default) | fashion_mnist | kmnist" },
    { "split", "NAME", "test (default) | train" },
    { "limit", "N", "examples to profile" },
    { "batch_size", "B", "batch size (default 100)" },
    { "halting", "true|JSON", "profile under the model's A-ViT halting masks" },
    { "heads", "N", "heads of a timm file" },
    { "image_size", "S", "image size of a timm file" },
    { "pos_resample", "MODE", "bicubic (default) | bilinear: position-embedding resizing at another image size" },
    { "out", "DIR", "output folder (default <preset out>/profile)" },
    { "png", "BOOL", "also PNG heatmaps through gnuplot (default true)" },
    { "threads", "N", "threads" },
  },
  examples = { "bin/attnlab scripts/profile.lua --model results/s2s/cifar_small/teacher.safetensors --limit 500" },
}
cli.help_requested(SPEC, arg)
local opts, words = cli.parse_pairs(arg, 1, SPEC)
local known = {}
for _, o in ipairs(SPEC.options) do known[o[1]] = true end
cli.check_known(SPEC, opts, known)
cli.check_words(SPEC, words)
local K = s2s.check
if not opts.model and not opts.preset then cli.usage_error(SPEC, "--model FILE (or --preset FILE) is required") end
-- (without a preset there is no quick table: --quick was accepted and did nothing)
if opts.quick == true and not opts.preset then cli.usage_error(SPEC, "--quick goes with --preset FILE (it applies the preset's quick table)") end
-- every value before any work, one line naming the option (s2s/check.lua's kinds: the ones the
-- preset keys they stand for have); an option given without a value arrives as true
do
  local KIND = { model = "path", preset = "path", dataset = "dataset", split = "split", limit = "posint",
                 batch_size = "posint", heads = "posint", image_size = "posint", threads = "posint",
                 pos_resample = "pos_resample", out = "folder", png = "bool", quick = "bool" }
  for _, k in ipairs(require("attnlab.util").sorted_keys(KIND)) do
    if opts[k] ~= nil then
      local p, why = K.check({ name = "profile.lua", keys = { [k] = KIND[k] } }, { [k] = opts[k] })
      if p or why then cli.usage_error(SPEC, K.option_message("--" .. p, why, opts[k])) end
    end
  end
  -- --halting: true (the file's own) or a config, checked as halting.lua reads it
  if opts.halting ~= nil and opts.halting ~= true then
    local p, why = K.check({ name = "profile.lua", keys = { halting = "halting" } }, { halting = opts.halting })
    if p or why then
      cli.usage_error(SPEC, K.phrase("--halting", (why:gsub("^needs a JSON object like '[^']*'", "needs true or a JSON object"))))
    end
  end
end
local function die(msg) cli.die(SPEC, msg) end

cli.protect(SPEC, function()
local preset = opts.preset and s2s.load_preset(opts.preset, opts.quick) or {}
if opts.preset then   -- the whole preset, as s2s_strategies.lua checks it, before any work (this
  -- script reads out, dataset and the profile section, but a misspelt key or a file that is no
  -- preset -- a sweep's experiment table -- must be refused, not ignored)
  local p, why = K.preset_problem(preset)
  if p or why then cli.die(SPEC, ("preset %s: %s"):format(opts.preset, K.phrase(p, why)), 2) end
end
local pp = preset.profile or {}
local base = opts.out or ((preset.out or "results/s2s") .. "/profile")
if opts.threads then al.set_num_threads(opts.threads) end
-- the model first (a damaged or diverged file is refused as it is read: s2s.load_model), then
-- the output folder, before the dataset is read
local path = opts.model or (preset.out and (preset.out .. "/teacher.safetensors")) or die("--model FILE is required")
local model, meta = s2s.load_model(path, { heads = opts.heads, image_size = opts.image_size,
                                            pos_resample = opts.pos_resample })
local halting = opts.halting
if halting == true then
  halting = s2s.distilling.file_halting(meta, path)
  if not halting then die(path .. " has no halting config (not an A-ViT file): pass --halting '{...}'") end
end
-- the dataset: --dataset, the preset's, else the one the file records it was trained on; the
-- model must take its images, and a model recorded as trained on another dataset is profiled
-- on this one only when --dataset names it (s2s.distilling.check_dataset), before any output
local dataset = opts.dataset or preset.dataset or s2s.distilling.recorded_dataset(meta) or "cifar10"
do
  local from = opts.dataset and ("--dataset " .. dataset)
    or (preset.dataset and ("the preset's dataset " .. dataset)) or ("the default dataset " .. dataset)
  s2s.distilling.check_dataset(model, meta, dataset, { what = "model", path = path, dataset_from = from,
                                                       explicit = opts.dataset ~= nil })
end
-- the results are written after the whole profile: a folder that cannot take them is said now
do
  local util = require "attnlab.util"
  local can, why = util.mkdir_p(base), nil
  if can then can, why = util.writable_path(base .. "/profile.json") else why = "cannot create the folder" end
  if not can then cli.usage_error(SPEC, ("cannot write the profile to %s: %s"):format(base, why)) end
end

do
  local split = opts.split or pp.split or "test"
  local limit = opts.limit or pp.limit
  local c = { dataset = dataset, image_size = model.image_size }
  if split == "test" then c.test_limit = limit else c.train_limit = limit end
  local tr, te = s2s.distilling.datasets(c)
  local ds = split == "test" and te or tr
  local t0 = al.clock()
  local prof = s2s.profile(model, ds, { limit = limit, batch_size = opts.batch_size or pp.batch_size or 100,
                                        topk = pp.topk, halting = halting, progress = true })
  prof.model = path
  prof.dataset, prof.split = dataset, split
  prof.seconds = al.clock() - t0
  s2s.provenance(prof, { ds }, { model_file = path })   -- data files, the model file's SHA-256, machine, revision
  local txt = s2s.format_profile(prof)
  print(txt)
  local ok, err = al.write_atomic(base .. "/profile.txt", txt .. "\n")
  if not ok then error(("cannot write %s/profile.txt: %s"):format(base, tostring(err)), 0) end
  local maps = prof.maps
  prof.maps = nil                                  -- heatmaps go to images, not the JSON
  s2s.write_json(base .. "/profile.json", prof)
  prof.maps = maps
  local files = s2s.write_heatmaps(prof, base, { png = opts.png ~= false })
  print(("wrote %s/profile.json, profile.txt and %d heatmap files (%.1f s)"):format(base, #files, prof.seconds))
end
end)
