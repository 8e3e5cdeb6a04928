-- attnlab.nn.attention -- the attention normalizer as a module, multi-head attention
-- that takes any normalizer, and the pre-LN encoder block whose token mixer can be
-- swapped for a sequential mixer (BiMamba, BiLSTM).
local al = require "attnlab"
local nn = al.nn

-- ---- Normalizer ----------------------------------------------------------------------
-- Names come from the C normalizer table (al.normalizers(), one row per normalizer): a row
-- without a parameter by its spec (softmax, sparsemax, entmax15); one with a parameter as
-- <spec>:<value> (entmax:<alpha>: fixed alpha by bisection; topk:<ratio>: k = max(1,
-- ceil(ratio*n))); a row's learned variant by its own name (hae: per-head adaptive entmax,
-- learned alpha_h = 1.05 + 0.9 sigmoid(a_h), a_h = 0 at init so alpha starts at 1.5).
local Normalizer = nn.class("Normalizer", nn.Module)
nn.Normalizer = Normalizer
local ROWS = {}      -- spec kind ("softmax", "entmax", "hae", "topk", ...) -> its table row
Normalizer.NAMES = {}
for _, row in ipairs(al.normalizers()) do
  if not row.param then
    ROWS[row.spec] = row
    Normalizer.NAMES[#Normalizer.NAMES + 1] = row.spec
  else
    if row.learned then
      ROWS[row.learned] = row
      Normalizer.NAMES[#Normalizer.NAMES + 1] = row.learned
    end
    ROWS[row.spec] = row
    Normalizer.NAMES[#Normalizer.NAMES + 1] = ("%s:<%s>"):format(row.spec, row.param)
  end
end

-- What a parameter value must be, and the error text when it is not.
local PARAM_OK = {
  -- (finite in float32 too: the kernels take alpha as a float, and 1e300 would become inf there)
  -- (and at least 1.0001, AL_ENTMAX_ALPHA_MIN of normalizers.h: nearer 1, float32 cannot
  -- compute alpha-entmax to its rounding; the C kernels refuse it at the first forward)
  alpha = { function(v) return v >= 1.0001 and v == v and v <= 3.4028234663852886e38 end,
            "must be a number from 1.0001 (nearer 1, float32 cannot compute it accurately: use softmax) to 3.4e38 (what a float32 holds)" },
  ratio = { function(v) return v > 0 and v <= 1 end, "must be in (0, 1] (the share of keys kept)" },
}

-- Parse a normalizer name into {kind=, alpha=, ratio=}; errors list the valid names.
function Normalizer.parse(name)
  local function bad(why)
    error(("unknown normalizer '%s'%s; valid: %s"):format(tostring(name), why or "",
      table.concat(Normalizer.NAMES, ", ")), 0)   -- a user's name: no position in this library
  end
  if type(name) ~= "string" then bad(" (not a string)") end
  local row = ROWS[name]
  if row and (not row.param or row.learned == name) then return { kind = name } end
  local spec, value = name:match("^([^:]+):(.+)$")
  row = spec and ROWS[spec]
  if row and row.param and row.spec == spec then
    -- a plain decimal (0.25, .5, 5e-1): tonumber also reads ' 0.5', '0.5 ' and '0x10', and the
    -- name as typed labels the run's records ("fashion_mnist__topk--0.5__seed1")
    local decimal = value:match("^%d*%.?%d*$") or value:match("^%d*%.?%d*[eE][%+%-]?%d+$")
    if not (decimal and value:find("%d")) then
      error(("normalizer '%s': the %s of %s:<%s> must be a plain decimal number (0.25, .5, 5e-1), got '%s'")
        :format(name, row.param, spec, row.param, value), 0)
    end
    local v, ok = tonumber(value), PARAM_OK[row.param]
    if not v or not ok[1](v) then
      error(("normalizer '%s': the %s of %s:<%s> %s, got '%s'"):format(name, row.param, spec, row.param, ok[2], value), 0)
    end
    return { kind = spec, [row.param] = v }
  end
  bad()
end

-- iters (the bisection steps of the entmax rows): the C kernels take an int in 1..INT_MAX;
-- checked when the module is built, not at forward ("bad argument #-1 to 'attention'").
local ITERS_MAX = 2147483647
function Normalizer.check_iters(who, v)
  if v ~= nil and (math.type(v) ~= "integer" or v < 1 or v > ITERS_MAX) then
    error(("%s: iters must be an integer in 1..%d, got %s"):format(who, ITERS_MAX, nn.show(v)), 0)
  end
  return v
end

function Normalizer:init(opts)
  opts = type(opts) == "string" and { name = opts } or nn.check_opts("Normalizer", opts, nn.keyset({ "name", "heads", "iters" }))
  self.name = opts.name or "softmax"
  self.spec = Normalizer.parse(self.name)
  if opts.heads ~= nil then nn.check_int("Normalizer", "heads", opts.heads) end
  self.heads = opts.heads
  self.iters = Normalizer.check_iters("Normalizer", opts.iters) or 50
  if self.spec.kind == "hae" then
    if not self.heads then error("Normalizer: hae needs heads (its learned alpha is per head)", 0) end
    self:param("pre_alpha", al.zeros({ self.heads }))
  end
end

-- alpha per head, in (1.05, 1.95); nil for the other normalizers.
function Normalizer:alpha()
  if self.spec.kind == "hae" then return 1.05 + 0.9 * al.sigmoid(self.pre_alpha) end
  if self.spec.kind == "entmax" then return self.spec.alpha end
  if self.spec.kind == "entmax15" then return 1.5 end
end

-- scores (B,H,N,N); mask: nil or broadcastable to scores, nonzero = keep.
function Normalizer:forward(scores, mask)
  if not al.is_tensor(scores) then   -- else "bad argument #1 to '?'" from the C normalizer
    error(("Normalizer: forward(scores [, mask]) expects scores, a float32 tensor (B,H,N,N), got %s"):format(nn.show(scores)), 0)
  end
  if mask ~= nil and not al.is_tensor(mask) then   -- else "bad argument #3 to '?'" at this line
    error(("Normalizer: forward(scores [, mask]) expects mask, a tensor broadcastable to scores (nonzero = keep), got %s")
      :format(nn.show(mask)), 0)
  end
  local k = self.spec.kind
  local row = ROWS[k]
  if not row.param then return al[row.name](scores, mask and { mask = mask } or nil) end
  if row.param ~= "alpha" then return al[row.name](scores, self.spec[row.param], mask and { mask = mask } or nil) end
  local oo = { mask = mask, iters = self.iters }
  if k ~= row.learned then return al[row.name](scores, self.spec.alpha, oo) end
  local h = self.heads
  return al[row.name](scores, self:alpha():reshape({ h, 1, 1 }), oo)
end

function Normalizer:extra_repr() return self.name end

-- ---- MultiHeadAttention ----------------------------------------------------------------
-- x (B,N,D) -> (B,N,D). qkv: Linear(D, 3D) laid out as timm's (3, heads, head_dim);
-- proj: Linear(D, D). forward(x, {key_mask=, keep=}): key_mask (B,N) nonzero = a real
-- key (padding masked); keep (B,N) per-token keep mask (halted tokens are masked as keys).
local MHA = nn.class("MultiHeadAttention", nn.Module)
nn.MultiHeadAttention = MHA

function MHA:init(opts)
  opts = nn.check_opts("MultiHeadAttention", opts,
    nn.keyset({ "dim", "heads", "normalizer", "qkv_bias", "iters", "keep_attention" }))
  local dim, heads = opts.dim, opts.heads
  if not (math.type(dim) == "integer" and dim > 0 and math.type(heads) == "integer" and heads > 0 and dim % heads == 0) then
    error(("MultiHeadAttention: dim must be a positive multiple of heads, got dim = %s, heads = %s"):format(nn.show(dim),
      nn.show(heads)), 0)
  end
  Normalizer.check_iters("MultiHeadAttention", opts.iters)
  nn.check_bool("MultiHeadAttention", "qkv_bias", opts.qkv_bias)
  nn.check_bool("MultiHeadAttention", "keep_attention", opts.keep_attention)
  self.dim, self.heads, self.head_dim = dim, heads, dim // heads
  self.scale = self.head_dim ^ -0.5
  self.forward_wants = ("a float32 tensor (B,N,%d)"):format(dim)   -- for check_forward's message
  self:add("qkv", nn.Linear(dim, 3 * dim, { bias = opts.qkv_bias ~= false }))
  self:add("normalizer", nn.Normalizer { name = opts.normalizer or "softmax", heads = heads, iters = opts.iters })
  self:add("proj", nn.Linear(dim, dim))
  self.keep_attention = opts.keep_attention or false   -- keep the last weights (diagnostics)
  self.track_support = false
end

-- The normalizer's alpha (a tensor per head for hae, a number for entmax, nil for the others);
-- a normalizer of the user's own has one only if it defines an alpha() method.
function MHA:alphas()
  local nm = self.normalizer
  if getmetatable(nm) == nn.Normalizer or type(nm.alpha) == "function" then return nm:alpha() end
  return nil
end

-- The attention core's arguments for al.attention, or nil when the normalizer is not
-- a stock nn.Normalizer (a user's own module: then the unfused path runs it).
local FUSED_KIND = {}   -- spec kind -> the name al.attention takes (every row is fused)
for k, row in pairs(ROWS) do if row.fused then FUSED_KIND[k] = row.name end end
function MHA:_fused_opts(mask)
  local nm = self.normalizer
  if getmetatable(nm) ~= nn.Normalizer or self.unfused then return nil end
  local k = nm.spec.kind
  local o = { heads = self.heads, scale = self.scale, normalizer = FUSED_KIND[k], mask = mask, iters = nm.iters,
              weights = (self.keep_attention or self.track_support) and true or false }
  local row = ROWS[k]
  if k == row.learned then o[row.param] = nm:alpha()          -- hae: alpha per head
  elseif row.param then o[row.param] = nm.spec[row.param] end
  return o
end

-- x (B,N,D). The core (scores, normalizer, weighted sum, head split and merge) is one
-- fused op with its own backward (al.attention); set self.unfused = true to run the
-- same computation as a chain of generic ops (the reference the tests compare with).
-- The forward's options: key_mask and keep, each nil or a tensor (B,N). Checked at the call:
-- a misspelt key (kep = ...) would run the layer unmasked, silently.
local FORWARD_OPTS = nn.keyset({ "key_mask", "keep" })
local FORWARD_TENSORS = { "key_mask", "keep" }
-- Called on every forward: nothing is formatted or allocated unless a check fails.
function MHA.check_forward(who, x, opts, want)
  if want and not al.is_tensor(x) then
    error(("%s: forward(x [, {key_mask =, keep =}]) expects x, %s, got %s"):format(who, want, nn.show(x)), 0)
  end
  if opts == nil then return end
  -- m(x, mask), the mask given where the options table goes: "bad argument #1 to 'for
  -- iterator'" from deep inside before
  if type(opts) ~= "table" or getmetatable(opts) ~= nil then
    error(("%s: forward options must be a table {key_mask =, keep =}, got %s%s"):format(who, nn.show(opts),
      al.is_tensor(opts) and " (pass a mask as {key_mask = m} or {keep = m})" or ""), 0)
  end
  for k in pairs(opts) do
    if not FORWARD_OPTS[k] then nn.check_opts(who .. ": forward", opts, FORWARD_OPTS) end   -- raises, naming k
  end
  for _, k in ipairs(FORWARD_TENSORS) do
    if opts[k] ~= nil and not al.is_tensor(opts[k]) then
      error(("%s: forward option %s must be a tensor (B,N), got %s"):format(who, k, nn.show(opts[k])), 0)
    end
  end
end

-- x and the masks of a token mixer's forward (attention, BiLSTM, BiMamba), after
-- check_forward: x a float32 (B,N,dim), key_mask and keep each (B,N) of x's B and N. Each
-- error names the module: unchecked, a wrong width failed inside an op that does not
-- ("attnlab.bilstm: weight_ih is ..."), and a mask of another shape with B*N elements was
-- reshaped to (B,N) and masked the wrong tokens, silently. Returns x's shape.
function MHA.check_input(who, x, dim, opts)
  local s = x:shape()
  if #s ~= 3 or s[3] ~= dim then
    error(("%s: expected x (B,N,%d), got (%s)"):format(who, dim, table.concat(s, ",")), 0)
  end
  if x:dtype() ~= "float32" then
    error(("%s: expected x float32 (B,N,%d), got %s (%s)"):format(who, dim, x:dtype(), table.concat(s, ",")), 0)
  end
  if opts == nil then return s end
  for _, k in ipairs(FORWARD_TENSORS) do
    local m = opts[k]
    if m ~= nil then
      local ms = m:shape()
      if #ms ~= 2 or ms[1] ~= s[1] or ms[2] ~= s[2] then
        error(("%s: %s must be (B,N) = (%d,%d), as x (%s), got (%s)"):format(who, k, s[1], s[2], table.concat(s, ","),
          table.concat(ms, ",")), 0)
      end
    end
  end
  return s
end

function MHA:forward(x, opts)
  MHA.check_forward("MultiHeadAttention", x, opts, self.forward_wants)
  local s = MHA.check_input("MultiHeadAttention", x, self.dim, opts)
  local B, N, D = s[1], s[2], s[3]
  local qkv = self.qkv(x)                                                          -- (B,N,3D)
  local m = opts and opts.key_mask
  if opts and opts.keep then m = m and (m * opts.keep) or opts.keep end
  local fo = self:_fused_opts(m and m:reshape({ B, N }))
  local o, p
  if fo then
    o, p = al.attention(qkv, fo)                                                   -- (B,N,D), (B,H,N,N)
  else
    local H, dh = self.heads, self.head_dim
    local t = qkv:reshape({ B, N, 3, H, dh }):permute({ 3, 1, 4, 2, 5 })           -- (3,B,H,N,dh)
    local q, k, v = t[1], t[2], t[3]
    local scores = al.matmul(q, k:transpose(3, 4)) * self.scale                    -- (B,H,N,N)
    p = self.normalizer(scores, m and m:reshape({ B, 1, 1, N }))
    o = al.matmul(p, v):transpose(2, 3):reshape({ B, N, D })
  end
  if self.keep_attention then self.last_attention = p:detach() end
  if self.track_support then self:_accumulate_support(p, opts) end
  return self.proj(o)
end

-- Support statistics: per head, the fraction of nonzero weights over all (query, key)
-- pairs ("all"), and over real keys only ("real": padding and halted keys excluded) --
-- with no mask the two are equal.
function MHA:_accumulate_support(p, opts)
  al.no_grad(function()
    local s = p:shape()
    local B, H, N = s[1], s[2], s[3]
    local function per_head(t) return al.sum(t:reshape({ B, H, N * N }):permute({ 2, 1, 3 }):reshape({ H, B * N * N }), 2) end
    local nz = al.gt(p, 0)                                                   -- (B,H,N,N)
    local st = self.support or { nonzero = al.zeros({ H }), pairs = 0, nonzero_real = al.zeros({ H }), pairs_real = 0 }
    st.nonzero = st.nonzero + per_head(nz)
    st.pairs = st.pairs + B * N * N
    local m = opts and opts.key_mask
    if opts and opts.keep then m = m and (m * opts.keep) or opts.keep end
    if m then   -- real (query, key) pairs only
      local km, qm = m:reshape({ B, 1, 1, N }), m:reshape({ B, 1, N, 1 })
      st.nonzero_real = st.nonzero_real + per_head(nz * km * qm)
      st.pairs_real = st.pairs_real + al.sum(qm * km):item()
    else
      st.nonzero_real = st.nonzero_real + per_head(nz)
      st.pairs_real = st.pairs_real + B * N * N
    end
    self.support = st
  end)
end

-- {all = {per head}, real = {per head}, mean_all=, mean_real=}; nil if not tracked.
function MHA:support_stats()
  local st = self.support
  if not st then return nil end
  local all = (st.nonzero / st.pairs):totable()
  local real = (st.nonzero_real / math.max(st.pairs_real, 1)):totable()
  local function mean(t) local s = 0 for _, v in ipairs(t) do s = s + v end return s / #t end
  return { all = all, real = real, mean_all = mean(all), mean_real = mean(real) }
end

function MHA:reset_support() self.support = nil end

-- The normalizer as a printout names it: a stock nn.Normalizer by its name ("softmax",
-- "topk:0.25"), a user's own module (attn:add("normalizer", MyModule())) by its class name.
function MHA:normalizer_label()
  local nm = self.normalizer
  if getmetatable(nm) == nn.Normalizer then return nm.name end
  if type(nm) == "table" then return tostring(nm.__name or "Module") end
  return type(nm)
end

function MHA:extra_repr()
  return ("dim=%d, heads=%d, normalizer=%s"):format(self.dim, self.heads, self:normalizer_label())
end

-- ---- EncoderBlock ---------------------------------------------------------------------------
-- Pre-LN: x = x + mixer(norm1(x)); x = x + mlp(norm2(x)). The token mixer is the child
-- "attn" (MultiHeadAttention by default); block:set_mixer(m) swaps it for any module
-- with forward(x (B,N,D), opts) -> (B,N,D). With opts.keep (B,N), halted tokens are
-- left unchanged: x = x + keep * f(...).
local EncoderBlock = nn.class("EncoderBlock", nn.Module)
nn.EncoderBlock = EncoderBlock

function EncoderBlock:init(opts)
  opts = nn.check_opts("EncoderBlock", opts,
    nn.keyset({ "dim", "heads", "normalizer", "qkv_bias", "iters", "mlp_ratio", "eps", "act", "drop", "mixer" }))
  if opts.dim == nil then error("EncoderBlock: dim is required", 0) end
  local dim = nn.check_int("EncoderBlock", "dim", opts.dim)
  if opts.mixer ~= nil and not nn.is_module(opts.mixer) then   -- as set_mixer: named now, not at forward
    error(("EncoderBlock: mixer must be a module (an nn.Module instance), got %s"):format(type(opts.mixer)), 0)
  end
  if opts.mixer ~= nil then EncoderBlock.check_mixer_dim("EncoderBlock", opts.mixer, dim) end
  if opts.mlp_ratio ~= nil then nn.check_number("EncoderBlock", "mlp_ratio", opts.mlp_ratio, true) end
  local eps = opts.eps or 1e-6
  self.dim = dim
  self:add("norm1", nn.LayerNorm(dim, { eps = eps }))
  self:add("attn", opts.mixer or nn.MultiHeadAttention { dim = dim, heads = opts.heads, normalizer = opts.normalizer,
                                                          qkv_bias = opts.qkv_bias, iters = opts.iters })
  self:add("norm2", nn.LayerNorm(dim, { eps = eps }))
  self.mlp_ratio = opts.mlp_ratio or 4
  self:add("mlp", nn.MLP { in_features = dim, hidden_features = math.floor(dim * self.mlp_ratio), act = opts.act or "gelu",
                           drop = opts.drop })
end

-- A mixer that states its width (m.dim: attention, BiLSTM, BiMamba) must have the block's; one
-- of another width was accepted and failed only at the first forward, far from the swap.
-- A user's mixer without a dim field is checked by its own forward.
function EncoderBlock.check_mixer_dim(who, m, dim)
  local mdim = rawget(m, "dim")
  if math.type(mdim) == "integer" and mdim ~= dim then
    error(("%s: the mixer %s has dim %d, but the block's width is %d"):format(who, m.__name or "Module", mdim, dim), 0)
  end
end

-- m is checked now: a non-module would be accepted and break every later use of the block
-- (forward, state_dict, even tostring), far from the call that caused it.
function EncoderBlock:set_mixer(m)
  if not nn.is_module(m) then
    local what = type(m)
    if al.is_tensor(m) then what = "a tensor"
    elseif type(m) == "table" and getmetatable(m) == nil then what = "a plain table"
    elseif type(m) == "table" and rawget(m, "new") then what = "a module class (call it to make a module)" end
    error(("EncoderBlock:set_mixer: the mixer must be a module (an nn.Module instance), got %s"):format(what), 2)
  end
  if type(m.forward) ~= "function" then
    error(("EncoderBlock:set_mixer: the mixer %s has no forward(x, opts) method"):format(m.__name or "Module"), 2)
  end
  EncoderBlock.check_mixer_dim("EncoderBlock:set_mixer", m, self.dim)
  self:add("attn", m)
  return self
end

-- Returns the new x, and the mixer's output (the distillation target in S2S).
function EncoderBlock:forward(x, opts)
  -- x is checked here, naming the block: its first use is norm1, whose error named a LayerNorm
  if not al.is_tensor(x) then MHA.check_forward("EncoderBlock", x, nil, ("a float32 tensor (B,N,%d)"):format(self.dim)) end
  MHA.check_input("EncoderBlock", x, self.dim)
  local mixed = self:call_child("attn", self.norm1(x), opts)
  local keep = opts and opts.keep
  local kk = keep and keep:reshape({ keep:shape()[1], keep:shape()[2], 1 })
  x = x + (kk and mixed * kk or mixed)
  local m = self:call_child("mlp", self.norm2(x))
  x = x + (kk and m * kk or m)
  return x, mixed
end

return nn
