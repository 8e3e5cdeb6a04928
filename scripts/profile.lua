-- scripts/profile.lua -- layer-wise sparsity profile of a ViT's attention over a dataset
-- split: per layer and head the attention entropy, effective support (keys holding 90% of
-- the mass), nonzero fraction and top-k mass, and token-interaction heatmaps per layer.
--
--   bin/attnlab scripts/profile.lua --model results/s2s/cifar_small/teacher.safetensors \
--       [--dataset cifar10] [--split test] [--limit 1000] [--halting true] [--out DIR] [--png false]
--   bin/attnlab scripts/profile.lua --preset experiments/s2s/cifar_small.lua [--quick]
--
-- --model: a file from scripts/distill.lua, or any timm ViT safetensors (--heads N,
-- --image_size S for those). --halting true profiles under the model's own A-ViT halting
-- masks (the config stored with an A-ViT file; or a JSON object) -- only running tokens
-- count as queries and keys. Writes DIR/profile.json, DIR/profile.txt, DIR/layer<l>.svg
-- (and .png through gnuplot when installed). DIR defaults to <preset out>/profile.
local al = require "attnlab"
local s2s = require "attnlab.s2s"

local function die(msg) io.stderr:write("profile.lua: " .. tostring(msg) .. "\n") os.exit(1) end

local opts = s2s.parse_args(arg, 1)
if opts.help or opts.h then
  print("usage: bin/attnlab scripts/profile.lua --model FILE [--dataset NAME] [--split test|train] [--limit N] [--halting true] [--out DIR]")
  os.exit(0)
end
local preset = opts.preset and s2s.load_preset(opts.preset, opts.quick) or {}
local pp = preset.profile or {}
local base = opts.out or ((preset.out or "results/s2s") .. "/profile")
if opts.threads then al.set_num_threads(opts.threads) end

local ok, err = xpcall(function()
  local path = opts.model or (preset.out and (preset.out .. "/teacher.safetensors")) or die("--model FILE is required")
  local model, meta = s2s.load_model(path, { heads = opts.heads, image_size = opts.image_size })
  local halting = opts.halting
  if halting == true then
    halting = meta.halting and al.json.decode(meta.halting)
    if not halting then die(path .. " has no halting config (not an A-ViT file): pass --halting '{...}'") end
  end
  local split = opts.split or pp.split or "test"
  local dataset = opts.dataset or preset.dataset or "cifar10"
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
  os.execute("mkdir -p '" .. base .. "'")
  local txt = s2s.format_profile(prof)
  print(txt)
  local maps = prof.maps
  prof.maps = nil                                  -- heatmaps go to images, not the JSON
  s2s.write_json(base .. "/profile.json", prof)
  prof.maps = maps
  local f = assert(io.open(base .. "/profile.txt", "w"))
  f:write(txt, "\n")
  f:close()
  local files = s2s.write_heatmaps(prof, base, { png = opts.png ~= false })
  print(("wrote %s/profile.json, profile.txt and %d heatmap files (%.1f s)"):format(base, #files, prof.seconds))
end, debug.traceback)
if not ok then die(err) end
