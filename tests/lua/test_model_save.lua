-- tests/lua/test_model_save.lua -- saving a trained attnlab ViT and getting the same model back
-- (lua/attnlab/nn/checkpoint.lua: save_vit, vit_from_file, load_vit): every normalizer round-trips
-- with bitwise-identical logits; the caller may override the normalizer but not the architecture;
-- a training checkpoint (run/fit.lua's, scripts/train.lua --checkpoint) loads its model; train.lua
-- --save writes the trained model without changing the record; a file whose normalizer
-- parameters the model lacks says which normalizer takes them.
local al = require "attnlab"
local T = require "harness"
local ck = require "attnlab.checkpoint"
local s2s = require "attnlab.s2s"
local fit = require "attnlab.run.fit"

local q = T.shquote
local cases, case = T.suite(function() al.set_num_threads(1) end)

-- A tiny image ViT (16x16, 1 channel, 4x4 patches: 17 tokens), its weights scaled up so that
-- the attention is far from uniform and another normalizer changes the logits.
local function vit(normalizer, extra)
  local o = { image_size = 16, patch_size = 4, channels = 1, num_classes = 5, dim = 16, depth = 2, heads = 2,
              normalizer = normalizer, seed = 3 }
  for k, v in pairs(extra or {}) do o[k] = v end
  local m = al.nn.ViT(o)
  al.no_grad(function()
    for _, np in ipairs(m:named_parameters()) do
      if np[1]:match("qkv%.weight$") then np[2]:mul_(6) end
      if np[1]:match("pre_alpha$") then np[2]:copy_(al.tensor({ -1.5, 2.0 })) end   -- alphas away from 1.5
    end
  end)
  m:eval()
  return m
end

local X = al.randn({ 4, 1, 16, 16 }, { generator = al.Generator(11) })

local function logits(m)
  m:eval()
  return al.no_grad(function() return m(X) end)
end

local function maxabs(a, b) return al.max(al.abs(a - b)):item() end

-- logits equal bit for bit (not merely max |diff| = 0 after rounding: every element compared)
local function same_bits(a, b, what)
  T.eq(a:shape(), b:shape(), 0, what .. ": shape")
  local x, y = a:contiguous():reshape({ -1 }):totable(), b:contiguous():reshape({ -1 }):totable()
  for i = 1, #x do
    if string.pack("<f", x[i]) ~= string.pack("<f", y[i]) then
      error(("%s: logit %d differs: %.9g vs %.9g"):format(what, i, x[i], y[i]), 0)
    end
  end
end

local function one_line(e) T.truthy(not e:find("\n"), "one line: " .. e) return e end

local dir = T.tmpdir("model-save")
local n_files = 0
local function path(ext)
  n_files = n_files + 1
  return ("%s/m%d%s"):format(dir, n_files, ext or ".safetensors")
end

-- ---- save_vit -> vit_from_file: the same model -----------------------------------------------------
for _, n in ipairs({ "softmax", "sparsemax", "entmax15", "hae", "topk:0.5", "entmax:1.3" }) do
  case(("save_vit -> vit_from_file: %s comes back as %s, bitwise the same logits"):format(n, n), function()
    local m = vit(n, { iters = 40 })
    local p = path()
    T.eq(ck.save_vit(p, m), p)
    local back, rep, c = ck.vit_from_file(p)
    T.eq({ back.cfg.normalizer, back:block(1).attn.normalizer.name, back:block(2).attn.normalizer.name },
      { n, n, n }, "normalizer")
    T.eq({ back.cfg.iters, c.normalizer_source, c.config_source }, { 40, "metadata attnlab_vit", "metadata attnlab_vit" })
    T.eq(#rep.missing + #rep.unexpected + #rep.misshaped, 0, 0, "clean load")
    same_bits(logits(back), logits(m), n)
    -- the config, not just the weights: every ViT option round-trips
    T.eq(ck.vit_config(back), ck.vit_config(m), 0, "config")
    if n == "hae" then T.eq(back:alphas(), m:alphas(), 0, "learned alphas") end
    -- load_vit into a model built the same way gives the same logits too
    local into = vit(n, { iters = 40, seed = 9 })
    ck.load_vit(into, p)
    same_bits(logits(into), logits(m), n .. " (load_vit)")
  end)
end

case("save_vit: metadata = attnlab_vit (the model's config) + heads + the caller's entries; s2s.load_model reads it", function()
  local m = vit("sparsemax", { init = "timm", mlp_ratio = 2 })
  local p = path()
  ck.save_vit(p, m, { note = "hello", score = { 1, 2 } })
  local _, meta = al.load(p)
  T.eq(meta.heads, "2")
  T.eq(meta.note, "hello")
  T.eq(al.json.decode(meta.score), { 1, 2 })
  local c = al.json.decode(meta.attnlab_vit)
  T.eq({ c.normalizer, c.init, c.mlp_ratio, c.dim, c.depth, c.image_size, c.patch_size, c.channels, c.seed },
    { "sparsemax", "timm", 2, 16, 2, 16, 4, 1, nil })
  local b = s2s.load_model(p)
  same_bits(logits(b), logits(m), "s2s.load_model of a save_vit file")
end)

case("save_vit -> vit_from_file: a text ViT (vocab_size, seq_len) round-trips; image_size does not apply to it", function()
  local m = al.nn.ViT({ vocab_size = 50, seq_len = 12, num_classes = 3, dim = 16, depth = 1, heads = 2, normalizer = "hae",
                        seed = 2 })
  m:eval()
  local ids = al.randint(1, 50, { 3, 12 }, { generator = al.Generator(4) })
  local p = path()
  ck.save_vit(p, m)
  local back = ck.vit_from_file(p)
  same_bits(al.no_grad(function() back:eval() return back(ids) end), al.no_grad(function() return m(ids) end), "text")
  T.eq(back.cfg.normalizer, "hae")
  one_line(T.raises(function() ck.vit_from_file(p, { image_size = 32 }) end, "is a text model (vocab_size 50, seq_len 12): image_size does not apply"))
end)

case("save_vit is atomic (al.save: a temporary file renamed over the target) and overwrites", function()
  local p = path()
  ck.save_vit(p, vit("softmax"))
  ck.save_vit(p, vit("entmax15"))
  T.eq(ck.vit_from_file(p).cfg.normalizer, "entmax15")
  local ls = io.popen("ls -A " .. q(dir))
  local names = ls:read("a")
  ls:close()
  T.truthy(not names:find(".tmp.", 1, true), "a temporary file was left: " .. names)
end)

-- ---- overrides and contradictions -------------------------------------------------------------------
case("vit_from_file(path, {normalizer = ...}) overrides the saved normalizer (an experiment), iters too", function()
  local m = vit("sparsemax")
  local p = path()
  ck.save_vit(p, m)
  local soft, _, c = ck.vit_from_file(p, { normalizer = "softmax" })
  T.eq({ soft.cfg.normalizer, c.normalizer, c.normalizer_source }, { "softmax", "softmax", "caller" })
  -- the same weights under softmax: what building a softmax ViT and loading them gives
  local want = vit("softmax")
  want:load_state_dict(m:state_dict())
  same_bits(logits(soft), logits(want), "override")
  assert(maxabs(logits(soft), logits(m)) > 1e-3, "the override must change the logits")
  local e = ck.vit_from_file(p, { normalizer = "entmax:1.3", iters = 7 })
  T.eq({ e.cfg.normalizer, e.cfg.iters }, { "entmax:1.3", 7 })
  -- a bad override is the caller's mistake, one line
  one_line(T.raises(function() ck.vit_from_file(p, { normalizer = "sparsmax" }) end,
    "checkpoint.vit_from_file: unknown normalizer 'sparsmax'"))
  one_line(T.raises(function() ck.vit_from_file(p, { iters = 0 }) end, "iters must be an integer"))
end)

case("overriding hae away (or to hae): strict says what the keys are; strict = false drops / keeps initial alphas", function()
  local h = vit("hae")
  local p = path()
  ck.save_vit(p, h)
  local e = one_line(T.raises(function() ck.vit_from_file(p, { normalizer = "softmax" }) end,
    "unexpected keys (2): blocks.0.attn.normalizer.pre_alpha, blocks.1.attn.normalizer.pre_alpha"))
  T.truthy(e:find('normalizer = "hae"', 1, true) and e:find("strict = false", 1, true), e)
  print("  error: " .. e)
  local soft, rep = ck.vit_from_file(p, { normalizer = "softmax", strict = false })
  T.eq(rep.unexpected, { "blocks.0.attn.normalizer.pre_alpha", "blocks.1.attn.normalizer.pre_alpha" })
  T.eq(soft.cfg.normalizer, "softmax")
  -- a softmax file loaded as hae: the file lacks the alphas
  local ps = path()
  ck.save_vit(ps, vit("softmax"))
  local e2 = one_line(T.raises(function() ck.vit_from_file(ps, { normalizer = "hae" }) end, "missing keys (2)"))
  T.truthy(e2:find('normalizer = "softmax", which the file records', 1, true), e2)
  local hae, rep2 = ck.vit_from_file(ps, { normalizer = "hae", strict = false })
  T.eq(#rep2.missing, 2)
  T.eq(hae:alphas(), { { 1.5, 1.5 }, { 1.5, 1.5 } }, 1e-6, "initial alphas")
end)

case("a structural option that contradicts the file is an error (dim, depth, heads, ...); an agreeing one is fine", function()
  local m = vit("entmax15")
  local p = path()
  ck.save_vit(p, m)
  one_line(T.raises(function() ck.vit_from_file(p, { depth = 3 }) end,
    "records depth = 2 (its metadata attnlab_vit), but depth = 3 was passed"))
  one_line(T.raises(function() ck.vit_from_file(p, { dim = 32 }) end, "records dim = 16"))
  one_line(T.raises(function() ck.vit_from_file(p, { num_classes = 10 }) end, "records num_classes = 5"))
  one_line(T.raises(function() ck.vit_from_file(p, { heads = 4 }) end, "records heads = 2 in its metadata"))
  one_line(T.raises(function() ck.vit_from_file(p, { vocab_size = 100 }) end, "records vocab_size = nothing (an image model)"))
  same_bits(logits(ck.vit_from_file(p, { dim = 16, depth = 2, heads = 2, patch_size = 4, mlp_ratio = 4 })), logits(m), "agreeing")
  -- a timm-style file (no config): the structure is its weights'
  local pt = path()
  al.save(pt, m:state_dict(), { heads = "2" })
  one_line(T.raises(function() ck.vit_from_file(pt, { depth = 4 }) end, "records depth = 2 (its weights)"))
  -- a config that contradicts the file's own weights: a damaged or hand-edited file
  local c = ck.vit_config(m)
  c.depth = 3
  local pd = path()
  al.save(pd, m:state_dict(), { attnlab_vit = al.json.encode(c), heads = "2" })
  one_line(T.raises(function() ck.vit_from_file(pd) end, "its metadata attnlab_vit says depth = 3, but its weights have depth = 2"))
  c.depth, c.patch_size, c.image_size = 2, 8, 16
  al.save(pd, m:state_dict(), { attnlab_vit = al.json.encode(c), heads = "2" })
  one_line(T.raises(function() ck.vit_from_file(pd) end, "says patch_size = 8, but its weights have patch_size = 4"))
end)

case("vit_from_file checks attnlab_vit's sizes against the tensors before building (text models too); key lists are capped", function()
  -- a text model's config was not checked before: depth 1e9 built blocks until memory ran out
  local m = al.nn.ViT({ vocab_size = 30, seq_len = 8, num_classes = 3, dim = 16, depth = 2, heads = 2, seed = 1 })
  local p = path()
  ck.save_vit(p, m)
  local sd, meta = al.load(p)
  local t0 = al.clock()
  for _, f in ipairs({ { "depth", 1000000000 }, { "dim", 16384 }, { "vocab_size", 10000000 }, { "seq_len", 1000000 },
                       { "num_classes", 100000 } }) do
    local c = al.json.decode(meta.attnlab_vit)
    local want = c[f[1]]
    c[f[1]] = f[2]
    local pb = path()
    al.save(pb, sd, { attnlab_vit = al.json.encode(c), heads = meta.heads })
    local e = one_line(T.raises(function() ck.vit_from_file(pb) end,
      ("its metadata attnlab_vit says %s = %d, but its weights have %s = %d"):format(f[1], f[2], f[1], want)))
    T.truthy(#e < 400, "short: " .. e)
  end
  T.truthy(al.clock() - t0 < 5, "refused before building")
  local ids = al.tensor({ { 1, 2, 3, 4, 5, 6, 7, 8 } }, { dtype = "int64" })
  local back = ck.vit_from_file(p)
  back:eval(); m:eval()
  same_bits(al.no_grad(function() return back(ids) end), al.no_grad(function() return m(ids) end), "text model round trip")
  -- an image file with many keys the model lacks: a few names and "and N more", not all of them
  local iv = vit("softmax")
  local isd = iv:state_dict()
  for i = 1, 300 do isd["extra." .. i] = al.zeros({ 1 }) end
  local e = one_line(T.raises(function() ck.load_vit(vit("softmax"), isd) end, "unexpected keys (300): extra."))
  T.truthy(e:find("and 295 more", 1, true) and #e < 600, "capped: " .. e)
end)

case("another image size: the saved model's pos_embed is resampled, its normalizer kept", function()
  local m = vit("sparsemax")
  local p = path()
  ck.save_vit(p, m)
  local big, rep = ck.vit_from_file(p, { image_size = 24 })
  T.eq({ big.image_size, big.cfg.normalizer, rep.resampled.from, rep.resampled.to }, { 24, "sparsemax", 4, 6 })
end)

-- ---- what save_vit refuses ----------------------------------------------------------------------------
case("save_vit refuses, in one line: an S2S student, a hand-swapped normalizer, a bad path, attnlab's own meta keys", function()
  local st = s2s.replace(vit("softmax"), { 2 }, "bilstm")
  one_line(T.raises(function() ck.save_vit(path(), st) end, "block 2's token mixer is BiLSTM, not attention"))
  local m = vit("softmax")
  m:block(1).attn.normalizer = al.nn.Normalizer({ name = "sparsemax", heads = 2 })
  one_line(T.raises(function() ck.save_vit(path(), m) end, "block 1's attention uses normalizer sparsemax (iters 50), but the model was built with softmax"))
  one_line(T.raises(function() ck.save_vit(path(), al.nn.Linear(2, 2)) end, "checkpoint.save_vit: expected an al.nn.ViT"))
  one_line(T.raises(function() ck.save_vit(dir .. "/missing/m.safetensors", vit("softmax")) end,
    "checkpoint.save_vit: cannot write " .. dir .. "/missing/m.safetensors"))
  one_line(T.raises(function() ck.save_vit(dir, vit("softmax")) end, "is a folder"))
  one_line(T.raises(function() ck.save_vit("", vit("softmax")) end, "path must be a file path"))
  one_line(T.raises(function() ck.save_vit(path(), vit("softmax"), { attnlab_vit = "{}" }) end, "meta key 'attnlab_vit' is attnlab's own"))
end)

-- ---- a file without a config: the hint -------------------------------------------------------------
case("a hae model saved with al.save (no config): the one-line error says normalizer = \"hae\" takes pre_alpha", function()
  local h = vit("hae")
  local p = path()
  al.save(p, h:state_dict(), { heads = "2" })
  local e = one_line(T.raises(function() ck.vit_from_file(p) end, "unexpected keys (2): blocks.0.attn.normalizer.pre_alpha"))
  T.truthy(e:find('blocks.<i>.attn.normalizer.pre_alpha is a learned parameter of normalizer "hae", which "softmax" does not have: load it with normalizer = "hae"', 1, true), e)
  T.truthy(not e:find("%.lua:%d+:"), "no Lua position: " .. e)
  print("  error: " .. e)
  same_bits(logits(ck.vit_from_file(p, { normalizer = "hae" })), logits(h), "with the hint's option")
  -- load_vit says the same
  local e2 = T.raises(function() ck.load_vit(vit("softmax"), p) end, 'load it with normalizer = "hae"')
  one_line(e2)
  -- a timm-style file keeps today's rule: softmax unless the caller names another
  local ps = path()
  al.save(ps, vit("sparsemax"):state_dict(), { heads = "2" })
  local _, _, c = ck.vit_from_file(ps)
  T.eq({ c.normalizer, c.normalizer_source, c.config_source }, { "softmax", "default (the file records none)", "weights" })
end)

-- ---- training checkpoints -----------------------------------------------------------------------------
-- A checkpoint as fit.run writes it after an epoch of a small run, and that run's model.
local function train_checkpoint(normalizer)
  local m = vit(normalizer)
  m:train()
  local ds = s2s.synthetic_dataset({ n = 32, size = 16, channels = 1, classes = 5, seed = 1 })
  local p = path(".ckpt")
  fit.run(m, { { name = "train", epochs = 1, lr = 1e-3, step = function(x, y) return al.cross_entropy(m(x), y), {} end } },
    { train = ds, batch_size = 16, seed = 1, checkpoint = p, key = "k" })
  return p, m
end

case("vit_from_file / load_vit on a training checkpoint (model.*, optim.*, state): the model's tensors, its normalizer", function()
  local p, m = train_checkpoint("entmax15")
  local sd, meta = al.load(p)
  T.truthy(sd["optim.step"] or next(sd), "optimizer entries")
  T.truthy(meta.state and meta.attnlab_vit, "state and attnlab_vit metadata")
  local back, rep, c = ck.vit_from_file(p)
  T.eq({ back.cfg.normalizer, c.normalizer_source, rep.training_checkpoint }, { "entmax15", "metadata attnlab_vit", true })
  same_bits(logits(back), logits(m), "training checkpoint")
  local into = vit("entmax15", { seed = 8 })
  local _, rep2 = ck.load_vit(into, p)
  T.eq(rep2.training_checkpoint, true)
  same_bits(logits(into), logits(m), "load_vit of a training checkpoint")
  same_bits(logits(s2s.load_model(p)), logits(m), "s2s.load_model of a training checkpoint")
  -- the loop still resumes from it (its reader is fit.split_checkpoint, shared)
  local ckr = fit.read_checkpoint(p)
  T.eq({ ckr.state.key, ckr.state.epoch }, { "k", 1 })
  T.truthy(ckr.optim.step ~= nil, "optimizer state")
end)

case("a training checkpoint written before checkpoints carried attnlab_vit: the normalizer from its run key, else an error", function()
  local m = vit("sparsemax")
  local sd = {}
  for k, v in pairs(m:state_dict()) do sd["model." .. k] = v end
  sd["optim.step"] = al.tensor({ 3 })
  local state = { key = "adam_eps=1e-08;dataset=kmnist;iters=50;normalizer=sparsemax;seed=1", stage = 1, epoch = 1, history = {} }
  local p = path(".ckpt")
  al.save(p, sd, { state = al.json.encode(state), heads = "2" })
  local back, _, c = ck.vit_from_file(p)
  T.eq({ back.cfg.normalizer, c.normalizer_source }, { "sparsemax", "the run's configuration key (state metadata)" })
  same_bits(logits(back), logits(m), "legacy training checkpoint")
  -- the run key's iters too (a bisection step count other than the default 50)
  state.key = "dataset=kmnist;iters=30;normalizer=entmax15;seed=1"
  al.save(p, sd, { state = al.json.encode(state), heads = "2" })
  local b30 = ck.vit_from_file(p)
  T.eq({ b30.cfg.normalizer, b30:block(1).attn.normalizer.iters, b30:block(2).attn.normalizer.iters }, { "entmax15", 30, 30 })
  -- an S2S run's key (a nested table) says nothing usable: the caller must name it
  state.key = "{teacher;{normalizer=softmax}}"
  al.save(p, sd, { state = al.json.encode(state), heads = "2" })
  one_line(T.raises(function() ck.vit_from_file(p) end, "is a training checkpoint that does not record its model's normalizer"))
  same_bits(logits(ck.vit_from_file(p, { normalizer = "sparsemax" })), logits(m), "named by the caller")
  -- a damaged state entry is one line naming the file
  al.save(p, sd, { state = "[1,", heads = "2" })
  one_line(T.raises(function() ck.vit_from_file(p) end, p .. " has 'state' metadata, as a training checkpoint has, but cannot be read as one"))
end)

case("fit.save_checkpoint writes attnlab_vit only for a plain ViT (an S2S student's checkpoint has none)", function()
  local p = path(".ckpt")
  fit.save_checkpoint(p, vit("hae"), nil, { key = "k" })
  local _, meta = al.load(p)
  T.eq(al.json.decode(meta.attnlab_vit).normalizer, "hae")
  fit.save_checkpoint(p, s2s.replace(vit("softmax"), { 1 }, "bilstm"), nil, { key = "k" })
  _, meta = al.load(p)
  T.eq({ meta.attnlab_vit, meta.heads }, { nil, "2" })
end)

-- ---- scripts/train.lua --save ---------------------------------------------------------------------------
local TRAIN = "scripts/train.lua --dataset marker --epochs 1 --train_limit 64 --test_limit 32 --batch_size 32 " ..
              "--dim 16 --heads 2 --seq_len 24 --progress false --normalizer "

case("train.lua --save: the trained model comes back with its normalizer and the record's test accuracy; the checkpoint too", function()
  T.need_host()
  local ps, pc, pr = path(), path(".ckpt"), path(".json")
  local out, err, code = T.run_host(TRAIN .. "hae --seed 2 --save " .. q(ps) .. " --checkpoint " .. q(pc) .. " --out " .. q(pr))
  T.eq(code, 0, 0, "exit status: " .. err)
  T.truthy(out:find(", model " .. ps, 1, true), "the summary names the model: " .. out)
  local rec = al.json.decode(T.read_file(pr))
  T.eq(rec.config.save, ps)
  local model, _, c = ck.vit_from_file(ps)
  T.eq({ model.cfg.normalizer, c.normalizer_source, model.cfg.seq_len, model.cfg.dim }, { "hae", "metadata attnlab_vit", 24, 16 })
  -- evaluated as the run evaluated it, the saved model scores the record's test accuracy exactly
  local cfg = al.train.config(rec.config)
  local _, te = al.train.datasets(cfg)
  T.eq(al.train.evaluate(model, te, cfg).accuracy, rec.test_accuracy, 0, "test accuracy of the saved model")
  T.eq(model:alphas(), rec.alphas, 1e-7, "learned alphas")
  -- the last epoch's checkpoint holds the same model
  local from_ckpt = ck.vit_from_file(pc)
  T.eq(from_ckpt.cfg.normalizer, "hae")
  local ids = te:batch(al.arange(8))
  same_bits(al.no_grad(function() from_ckpt:eval() return from_ckpt(ids) end),
    al.no_grad(function() model:eval() return model(ids) end), "checkpoint vs --save")
  local _, meta = al.load(ps)
  T.eq(al.json.decode(meta.train_config).normalizer, "hae")
  T.eq(meta.test_accuracy, tostring(rec.test_accuracy))
end)

case("train.lua --save changes nothing in the record but config.save; the run's numbers are the same", function()
  T.need_host()
  local a, b, ps = path(".json"), path(".json"), path()
  local _, err, code = T.run_host(TRAIN .. "sparsemax --out " .. q(a))
  T.eq(code, 0, 0, err)
  _, err, code = T.run_host(TRAIN .. "sparsemax --out " .. q(b) .. " --save " .. q(ps))
  T.eq(code, 0, 0, err)
  local ra, rb = al.json.decode(T.read_file(a)), al.json.decode(T.read_file(b))
  T.eq(ra.config.save, nil)
  T.eq(rb.config.save, ps)
  local out, err2, code2 = T.run_host("scripts/record_hash.lua " .. q(a) .. " " .. q(b))
  T.eq(code2, 0, 0, err2)
  local h1, h2 = out:match("^(%x+)  [^\n]*\n(%x+)  ")
  T.truthy(h1 and h1 == h2, "record hashes differ: " .. out)
  T.eq(rb.test_accuracy, ra.test_accuracy)
  T.eq(rb.support_density, ra.support_density)
  -- in-process: the model al.train.run returns is the one saved, bit for bit
  local rec, model = al.train.run({ dataset = "marker", epochs = 1, train_limit = 64, test_limit = 32, batch_size = 32,
                                    dim = 16, heads = 2, seq_len = 24, progress = false, normalizer = "topk:0.5",
                                    save = ps })
  T.eq(rec.config.save, ps)
  local back = ck.vit_from_file(ps)
  local ids = al.randint(1, 100, { 4, 24 }, { generator = al.Generator(5) })
  same_bits(al.no_grad(function() back:eval() return back(ids) end), al.no_grad(function() model:eval() return model(ids) end),
    "al.train.run save")
end)

-- the record's per-epoch val_accuracy is the returned model evaluated on the held-out part of
-- the training split (train_val_split with the run's seed), not on the test split
case("al.train.run with val: the last epoch's val_accuracy is the model's accuracy on the val split", function()
  local rec, model = al.train.run({ dataset = "marker", epochs = 1, train_limit = 64, test_limit = 48, batch_size = 32,
                                    val = 40, dim = 16, heads = 2, seq_len = 24, progress = false })
  local _, te, val = al.train.datasets(rec.config)
  T.eq({ val.n, te.n }, { 40, 48 })
  local on_val, on_test = al.train.evaluate(model, val, rec.config), al.train.evaluate(model, te, rec.config)
  T.truthy(on_val.accuracy ~= on_test.accuracy, "the fixture tells the two splits apart")
  T.eq(rec.epochs[1].val_accuracy, on_val.accuracy)
  T.eq(rec.epochs[1].test_accuracy, on_test.accuracy)
end)

case("train.lua --save where nothing can be written, or onto --out / --checkpoint: refused before training, one line, exit 2", function()
  T.need_host()
  local function refused(args, pat)
    local out, err, code = T.run_host(TRAIN .. "softmax " .. args)
    T.eq(code, 2, 0, "exit status (stderr: " .. err .. ")")
    T.truthy(err:sub(1, 11) == "train.lua: " and err:find(pat, 1, true), "stderr: " .. err)
    T.eq(select(2, err:gsub("\n", "")), 1, 0, "lines of: " .. err)
    T.truthy(not out:find("epoch", 1, true), "it trained: " .. out)
  end
  refused("--save " .. q(dir .. "/missing/m.safetensors"), "--save " .. dir .. "/missing/m.safetensors: cannot create a file in")
  refused("--save " .. q(dir), "--save " .. dir .. ": it is a folder")
  local p = path(".json")
  refused("--save " .. q(p) .. " --out " .. q(p), "save and out are the same file")
  refused("--save " .. q(p) .. " --checkpoint " .. q(p), "save and checkpoint are the same file")
  refused("--save 5", "save must be a file path, got 5")
  local okr, msg = pcall(al.train.run, { dataset = "marker", epochs = 1, save = dir .. "/missing/m.safetensors" })
  T.truthy(not okr and tostring(msg):find("cannot write the model to " .. dir .. "/missing/m.safetensors", 1, true), tostring(msg))
  -- and --help lists it
  local out = T.run_host("scripts/train.lua --help")
  T.truthy(out:find("--save FILE", 1, true), "--help lacks --save: " .. out)
end)

-- The config checks that a crafted entry passed silently: qkv_bias against the qkv bias tensors;
-- image_size against the pos_embed grid (else the model was built at the entry's size and
-- pos_embed resampled to it, a different model without a word); a hand-set iters.
case("attnlab_vit's qkv_bias and image_size must match the weights; save_vit refuses a normalizer's changed iters", function()
  local m = vit("softmax")
  local p = path()
  ck.save_vit(p, m)
  local sd, meta = al.load(p)
  for _, f in ipairs({ { "qkv_bias", false, "qkv_bias = false, but its weights have qkv_bias = true" },
                       { "image_size", 32, "image_size = 32, but its weights have image_size = 16" } }) do
    local c = al.json.decode(meta.attnlab_vit)
    c[f[1]] = f[2]
    local pb = path()
    al.save(pb, sd, { attnlab_vit = al.json.encode(c), heads = meta.heads })
    one_line(T.raises(function() ck.vit_from_file(pb) end, "its metadata attnlab_vit says " .. f[3]))
  end
  local e = vit("entmax15")
  e:block(2).attn.normalizer.iters = 30
  one_line(T.raises(function() ck.save_vit(path(), e) end,
    "block 2's attention uses normalizer entmax15 (iters 30), but the model was built with entmax15 (iters 50)"))
end)

cases[#cases + 1] = { name = "cleanup", fn = function() T.rm_rf(dir) end }

return cases
