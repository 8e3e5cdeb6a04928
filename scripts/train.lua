-- scripts/train.lua -- train the compact classifier once: one dataset, one normalizer,
-- one seed; print progress; write one JSON record atomically.
--
--   bin/attnlab scripts/train.lua --dataset cifar10 --normalizer topk:0.25 --seed 3 --epochs 5 \
--       [--out results/run.json] [--checkpoint results/run.ckpt] [--config my.lua] [--key value ...]
--
-- Every key of al.train.DEFAULTS can be given as --key value (numbers are parsed), e.g.
-- --init timm (default torch), --decay_all true (weight decay on every parameter, as
-- torch.optim.AdamW(model.parameters())), --warmup_epochs 0.15 --min_lr 0 --clip_grad 0.
-- It prints the whole resolved recipe (every key, defaults included) when it starts.
-- --config FILE loads a Lua file returning a table of the same keys (command-line keys
-- win). With --checkpoint, a stopped run resumes from its last finished epoch.
local al = require "attnlab"

local cfg = {}
local i = 1
while i <= #arg do
  local k = arg[i]:match("^%-%-([%w_]+)$")
  if not k then io.stderr:write("train.lua: unexpected argument '" .. arg[i] .. "' (options are --key value)\n") os.exit(2) end
  local v = arg[i + 1]
  if v == nil then io.stderr:write("train.lua: --" .. k .. " needs a value\n") os.exit(2) end
  if k == "config" then
    local chunk, err = loadfile(v)
    if not chunk then io.stderr:write("train.lua: " .. err .. "\n") os.exit(2) end
    for kk, vv in pairs(chunk()) do if cfg[kk] == nil then cfg[kk] = vv end end
  else
    if v == "true" then v = true elseif v == "false" then v = false else v = math.tointeger(tonumber(v)) or tonumber(v) or v end
    cfg[k] = v
  end
  i = i + 2
end

-- the whole resolved recipe first, so a log says what ran (defaults included)
local okc, resolved = pcall(al.train.config, cfg)
if not okc then io.stderr:write("train.lua: " .. tostring(resolved) .. "\n") os.exit(1) end
if resolved.progress then
  local keys = {}
  for k in pairs(resolved) do keys[#keys + 1] = k end
  table.sort(keys)
  local parts = {}
  for _, k in ipairs(keys) do parts[#parts + 1] = k .. "=" .. tostring(resolved[k]) end
  print("recipe: " .. table.concat(parts, " "))
end

local ok, rec = pcall(al.train.run, cfg)
if not ok then io.stderr:write("train.lua: " .. tostring(rec) .. "\n") os.exit(1) end
print(("%s %s seed %d: test accuracy %.4f%s, support density %.3f, %.1f img/s train, %.3f ms/example inference%s")
  :format(rec.config.dataset, rec.config.normalizer, rec.config.seed, rec.test_accuracy,
    rec.test_accuracy_exact and (" (exact 1k: %.4f)"):format(rec.test_accuracy_exact) or "",
    rec.support_density, rec.train_img_per_s or 0, rec.infer_s_per_example * 1e3,
    rec.config.out and (", record " .. rec.config.out) or ""))
