-- attnlab.nn.vit -- the compact ViT-style classifier (and its text variant).
--
-- Parameter names are timm's (cls_token, pos_embed, patch_embed.proj.weight [D,C,P,P],
-- blocks.<i>.norm1/attn.qkv/attn.proj/norm2/mlp.fc1/mlp.fc2, norm, head), LayerNorm eps
-- 1e-6, exact-erf GELU, so checkpoints interoperate. The text variant embeds token ids
-- (tok_embed.weight [V,D]) and prepends the class token the same way.
--
-- The study's preset: depth 2, heads 4, dim 64, mlp_ratio 4 (MLP width 256), patch 8 on
-- 32x32 and 7 on 28x28 images (a 4x4 grid + class token: N = 17 tokens).
--
-- Initialisation (opts.init, written into every run record by al.train):
--   "torch" (default): PyTorch's module defaults, as a plain PyTorch model gets them --
--      Linear and the patch Conv2d kaiming_uniform(a = sqrt(5)) = U(-1/sqrt(fan_in),
--      1/sqrt(fan_in)) for weights and biases, LayerNorm (1, 0), position embedding and
--      class token N(0, 0.02^2), token embedding N(0, embed_std^2).
--   "timm": timm's ViT _init_weights (DeiT's own, the S2S presets use it) -- Linear
--      weights trunc_normal(0.02) in [-2, 2] with zero biases, LayerNorm (1, 0), the patch
--      Conv2d as PyTorch's default, position embedding, class token and token embedding
--      trunc_normal(0.02) (the token embedding: trunc_normal(embed_std)).
-- opts.embed_std (default 0.02): the text model's token embedding std. nn.Embedding's own
-- default N(0, 1) is embed_std = 1 (it trains this model far worse).
local al = require "attnlab"
local nn = al.nn

local ViT = nn.class("ViT", nn.Module)
nn.ViT = ViT

-- The container of the encoder blocks: its children are timm's "0", "1", ... (state-dict keys
-- blocks.0, blocks.1, ...), model:block(i) counts from 1, and an error inside a block names
-- both: "in block 2 (blocks.1, EncoderBlock): ...".
local Blocks = nn.class("Blocks", nn.Module)
function Blocks:child_label(name, m)
  local i = math.tointeger(tonumber(name))
  if not i then return nn.Module.child_label(self, name, m) end
  return ("block %d (blocks.%s, %s)"):format(i + 1, name, m.__name or "?")
end

ViT.PRESET = { dim = 64, depth = 2, heads = 4, mlp_ratio = 4, normalizer = "softmax", qkv_bias = true,
               init = "torch", embed_std = 0.02 }

ViT.INITS = { "timm", "torch" }

-- Raises one line naming the problem unless `name` is a known initialisation scheme. level:
-- error's level (default 3: the caller of the function that called check_init, as
-- train.config and parity want); check_config passes 0 (no position): from there, 3 pointed
-- inside this file.
function ViT.check_init(name, who, level)
  for _, n in ipairs(ViT.INITS) do if name == n then return name end end
  error(("%s: unknown init '%s'; known: %s"):format(who or "ViT", tostring(name), table.concat(ViT.INITS, ", ")), level or 3)
end

local function is_generator(v) return v ~= nil and getmetatable(v) == debug.getregistry()["attnlab.Generator"] end

-- Every option ViT reads (nn.check_opts refuses others).
ViT.OPTIONS = nn.keyset({ "dim", "depth", "heads", "mlp_ratio", "normalizer", "qkv_bias", "init", "embed_std", "iters",
                          "num_classes", "seed", "generator", "image_size", "patch_size", "channels", "vocab_size",
                          "seq_len" })

-- Every value of a merged config (preset + options), before anything is built: each error is
-- one line naming the option and its value (sizes: positive integers, depth >= 1; ratios:
-- positive finite numbers). Unchecked, a bad size failed inside an op ("attempt to perform
-- 'n%%0'", "attnlab.empty: negative size"), or built another model silently (depth 0: no
-- blocks; channels 0: a patch embedding of fan-in 0).
function ViT.check_config(o)
  local W = "ViT"
  local int, num = nn.check_int, nn.check_number
  local D = int(W, "dim", o.dim)
  local heads = int(W, "heads", o.heads)
  if D % heads ~= 0 then error(("ViT: dim %d is not divisible by heads %d"):format(D, heads), 0) end
  int(W, "depth", o.depth)
  num(W, "mlp_ratio", o.mlp_ratio, true)
  if math.floor(D * o.mlp_ratio) < 1 then
    error(("ViT: mlp_ratio %s gives an MLP width of floor(dim * mlp_ratio) = 0 (dim %d)"):format(nn.show(o.mlp_ratio), D), 0)
  end
  if o.num_classes == nil then error("ViT: num_classes is required", 0) end
  int(W, "num_classes", o.num_classes)
  nn.check_bool(W, "qkv_bias", o.qkv_bias)
  nn.Normalizer.check_iters(W, o.iters)
  if o.seed ~= nil and math.tointeger(o.seed) == nil then
    error(("ViT: seed must be an integer, got %s"):format(nn.show(o.seed)), 0)
  end
  -- checked here: a bad generator failed in the first draw, inside nn/init.lua, without the
  -- option's name; and with a generator the seed was ignored, silently
  if o.generator ~= nil and not is_generator(o.generator) then
    error(("ViT: generator must be an al.Generator, got %s"):format(nn.show(o.generator)), 0)
  end
  if o.generator ~= nil and o.seed ~= nil then
    error(("ViT: give seed or generator, not both (seed %s would be ignored: the weights are drawn from the generator)")
      :format(nn.show(o.seed)), 0)
  end
  ViT.check_init(o.init, "ViT", 0)
  if type(o.embed_std) ~= "number" or not (o.embed_std > 0) or o.embed_std == math.huge then
    error(("ViT: embed_std must be a number > 0, got %s"):format(nn.show(o.embed_std)), 0)
  end
  local image_keys = { "image_size", "patch_size", "channels" }
  if o.vocab_size ~= nil or o.seq_len ~= nil then   -- the text model
    for _, k in ipairs(image_keys) do
      if o[k] ~= nil then
        error(("ViT: %s is an image option, but vocab_size/seq_len make a text model: give one or the other"):format(k), 0)
      end
    end
    if o.vocab_size == nil then error("ViT (text): vocab_size is required with seq_len", 0) end
    if o.seq_len == nil then error("ViT (text): seq_len is required", 0) end
    int(W, "vocab_size", o.vocab_size)
    int(W, "seq_len", o.seq_len)
  else
    if o.image_size == nil or o.patch_size == nil then
      error("ViT: image_size and patch_size are required (or vocab_size and seq_len for text)", 0)
    end
    local S, P = int(W, "image_size", o.image_size), int(W, "patch_size", o.patch_size)
    if o.channels ~= nil then int(W, "channels", o.channels) end
    if S % P ~= 0 then error(("ViT: image_size %d is not a multiple of patch_size %d"):format(S, P), 0) end
  end
end

function ViT:init(opts)
  opts = nn.check_opts("ViT", opts, ViT.OPTIONS)
  local o = {}
  for k, v in pairs(ViT.PRESET) do o[k] = v end
  for k, v in pairs(opts) do o[k] = v end
  self.cfg = o
  ViT.check_config(o)
  local D = o.dim
  local torch_init = o.init == "torch"
  -- a small normal draw: plain N(0, std^2) under "torch", trunc_normal in [-2, 2] under "timm"
  local function small_normal(t, std, gen_)
    if torch_init then return nn.init.normal_(t, 0, std, gen_) end
    return nn.init.trunc_normal_(t, std, 0, -2, 2, gen_)
  end
  -- all random draws come from one generator in a fixed order, so the same seed gives the
  -- same initial weights whatever the normalizer (hae's own parameters start at 0)
  local gen = o.generator or al.Generator(o.seed or 0)
  if o.vocab_size then
    self.text = true
    self.seq_len = o.seq_len
    self.num_tokens = self.seq_len + 1
    self:add("tok_embed", nn.Embedding(o.vocab_size, D))
    small_normal(self.tok_embed.weight, o.embed_std, gen)
  else
    self.text = false
    local S, P, C = o.image_size, o.patch_size, o.channels or 3
    self.image_size, self.patch_size, self.channels = S, P, C
    self.grid = S // P
    self.num_tokens = self.grid * self.grid + 1
    local pe = self:add("patch_embed", nn.Module())
    pe.__name = "PatchEmbed"
    pe:add("proj", nn.Module())
    pe.proj.__name = "Conv2d"
    pe.proj:param("weight", al.empty({ D, C, P, P }))
    pe.proj:param("bias", al.zeros({ D }))
    nn.init.linear_default_(pe.proj.weight, pe.proj.bias, gen)   -- PyTorch's Conv2d default
  end
  self:param("cls_token", al.zeros({ 1, 1, D }))
  self:param("pos_embed", al.zeros({ 1, self.num_tokens, D }))
  small_normal(self.pos_embed, 0.02, gen)
  small_normal(self.cls_token, 0.02, gen)
  local blocks = self:add("blocks", Blocks())
  for i = 0, o.depth - 1 do
    blocks:add(tostring(i), nn.EncoderBlock { dim = D, heads = o.heads, mlp_ratio = o.mlp_ratio,
                                              normalizer = o.normalizer, qkv_bias = o.qkv_bias, iters = o.iters })
  end
  self.depth = o.depth
  self:add("norm", nn.LayerNorm(D, { eps = 1e-6 }))
  self:add("head", nn.Linear(D, o.num_classes))
  -- Linear layers, in module order, from the model's generator (LayerNorms are (1, 0)):
  -- "timm" is timm's _init_weights (trunc_normal(0.02) weights, zero biases), "torch" is
  -- nn.Linear's default (drawn again here so the seed alone decides the weights)
  for _, pm in ipairs(self:modules()) do
    local m = pm[2]
    if getmetatable(m) == nn.Linear then
      if torch_init then
        nn.init.linear_default_(m.weight, m.bias, gen)
      else
        nn.init.trunc_normal_(m.weight, 0.02, 0, -2, 2, gen)
        if m.bias then m.bias:zero_() end
      end
    end
  end
end

-- The i-th encoder block, 1-based (its state-dict name is blocks.<i-1>). Anything but an
-- integer in 1..depth is an error: a nil returned here failed only at the next use, as
-- "attempt to index a nil value".
function ViT:block(i)
  local n = type(i) == "number" and math.tointeger(i)
  if not n or n < 1 or n > self.depth then
    local why = not n and (type(i) == "string" and " (a string)" or "") or n < 1 and " (blocks are numbered from 1)"
      or (" (the model has depth %d)"):format(self.depth)
    error(("ViT:block: the block number must be an integer in 1..%d, got %s%s"):format(self.depth, nn.show(i), why), 2)
  end
  return self.blocks._children[tostring(n - 1)]
end

function ViT:attention_layers()
  local out = {}
  for i = 1, self.depth do
    local a = self:block(i).attn
    if getmetatable(a) == nn.MultiHeadAttention then out[#out + 1] = a end
  end
  return out
end

-- Images (B,C,H,W) -> patch tokens (B, grid^2, D): the stride-P convolution as a
-- reshape to (B, gh*gw, C*P*P) and a matmul with the (D, C*P*P) weight.
function ViT:embed_patches(x)
  local s = x:shape()
  local B, C, H, W = s[1], s[2], s[3], s[4]
  local P = self.patch_size
  if #s ~= 4 or C ~= self.channels or H ~= self.image_size or W ~= self.image_size then
    error(("ViT: expected images (B,%d,%d,%d), got (%s)"):format(self.channels, self.image_size, self.image_size,
      table.concat(s, ",")), 0)
  end
  if x:dtype() ~= "float32" then   -- else refused inside the patch matmul, as "attnlab.linear: ... (B,4,48)"
    error(("ViT: expected images float32 (B,%d,%d,%d), got %s (%s)"):format(self.channels, self.image_size,
      self.image_size, x:dtype(), table.concat(s, ",")), 0)
  end
  local g = self.grid
  local patches = x:reshape({ B, C, g, P, g, P }):permute({ 1, 3, 5, 2, 4, 6 }):reshape({ B, g * g, C * P * P })
  local w = self.patch_embed.proj.weight:reshape({ self.cfg.dim, C * P * P })
  return al.linear(patches, w, self.patch_embed.proj.bias)
end

-- The token sequence the blocks see: [class token; patches or words] + pos_embed, (B, N, D).
-- x: images (B,C,H,W) float32, or token ids (B,L) int64 (1-based) for text.
function ViT:embed(x)
  if not al.is_tensor(x) then
    local want = self.text and ("token ids, an int64 tensor (B,%d)"):format(self.seq_len)
      or ("images, a float32 tensor (B,%d,%d,%d)"):format(self.channels, self.image_size, self.image_size)
    error(("ViT: forward(x [, {key_mask =, keep =}]) expects x, %s, got %s"):format(want, nn.show(x)), 0)
  end
  local tokens
  if self.text then
    local s = x:shape()
    if #s ~= 2 or s[2] ~= self.seq_len or x:dtype() ~= "int64" then
      error(("ViT: expected token ids int64 (B,%d), got %s (%s)"):format(self.seq_len, x:dtype(), table.concat(s, ",")), 0)
    end
    tokens = self.tok_embed(x)
  else
    tokens = self:embed_patches(x)
  end
  local B = tokens:shape()[1]
  local cls = self.cls_token:expand({ B, 1, self.cfg.dim })
  return al.cat({ cls, tokens }, 2) + self.pos_embed
end

-- The features after the final norm, (B, N, D); x and opts as for ViT:forward.
function ViT:forward_features(x, opts)
  if opts ~= nil and al.is_tensor(x) then nn.MultiHeadAttention.check_forward("ViT", x, opts) end   -- (x: embed)
  local h = self:embed(x)
  for i = 0, self.depth - 1 do
    h = self.blocks:call_child(i, h, opts)
  end
  return self.norm(h)
end

-- x: images (B,C,H,W) float32, or token ids (B,L) int64 (1-based) for text.
-- opts: key_mask (B, N) with N = L+1 tokens (nonzero = real; the class token is real),
--       keep (B, N) per-token keep mask. Returns logits (B, num_classes).
function ViT:forward(x, opts)
  local h = self:forward_features(x, opts)
  return self.head(h:select(2, 1))
end

-- Attention support tracking over an evaluation pass: per layer, per head.
function ViT:track_support(on)
  for _, a in ipairs(self:attention_layers()) do a.track_support = on; if on then a:reset_support() end end
end

function ViT:support_stats()
  local out = {}
  for i, a in ipairs(self:attention_layers()) do out[i] = a:support_stats() end
  return out
end

-- Learned alphas per layer (hae), as Lua lists.
function ViT:alphas()
  local out = {}
  for i, a in ipairs(self:attention_layers()) do
    local al_ = a:alphas()
    out[i] = al.is_tensor(al_) and al_:totable() or al_
  end
  return out
end

-- The header's normalizer: what the blocks run now, not the option the model was built with
-- (a block's mixer or its attention's normalizer may have been swapped since). One name when
-- every block runs the same; else one entry per block, "normalizer=per block (1: softmax,
-- 2: TempSoftmax)". A block whose mixer is not attention has none: "none (BiMamba)".
function ViT:normalizer_summary()
  local labels, same = {}, true
  for i = 1, self.depth do
    local mixer = self:block(i).attn
    local label
    if getmetatable(mixer) == nn.MultiHeadAttention then
      label = mixer:normalizer_label()
    else
      label = ("none (%s)"):format(type(mixer) == "table" and mixer.__name or type(mixer))
    end
    labels[i] = label
    same = same and label == labels[1]
  end
  if same then return labels[1] end
  local parts = {}
  for i, l in ipairs(labels) do parts[i] = ("%d: %s"):format(i, l) end
  return ("per block (%s)"):format(table.concat(parts, ", "))
end

function ViT:extra_repr()
  if self.text then
    return ("text: vocab=%d, tokens=%d, dim=%d, depth=%d, heads=%d, normalizer=%s, init=%s, embed_std=%g"):format(
      self.cfg.vocab_size, self.num_tokens, self.cfg.dim, self.depth, self.cfg.heads, self:normalizer_summary(),
      self.cfg.init, self.cfg.embed_std)
  end
  return ("image %dx%d, patch %d, tokens=%d, dim=%d, depth=%d, heads=%d, normalizer=%s, init=%s"):format(self.image_size,
    self.image_size, self.patch_size, self.num_tokens, self.cfg.dim, self.depth, self.cfg.heads, self:normalizer_summary(),
    self.cfg.init)
end

return nn
