-- attnlab.nn.mixers -- multi-head bidirectional sequential token mixers that can take
-- attention's place in an EncoderBlock: forward(x (B,N,D), opts) -> (B,N,D), with
-- opts.keep / opts.key_mask (B,N): an absent token neither feeds the recurrence nor
-- receives an update, and the reverse direction starts at each sequence's last present
-- token (see include/attnlab/mixers.h). The scans are fused C kernels.
local al = require "attnlab"
local nn = al.nn

local function show(v) return al.cli.show(v) end   -- a value in a message: "nan", never "-nan"

-- An integer option checked when the module is built: a bad size would otherwise pass here
-- and fail only at forward, inside the C kernel, with its parameter dump.
local function check_int(who, key, v, lo, hi)
  if math.type(v) ~= "integer" or v < lo or (hi and v > hi) then
    local want = hi and ("an integer in %d..%d"):format(lo, hi) or ("an integer >= %d"):format(lo)
    error(("%s: %s must be %s, got %s"):format(who, key, want, show(v)), 0)
  end
  return v
end

-- The forward's arguments are attention's, checked the same way and naming the mixer: x a
-- float32 (B,N,dim) (a wrong width failed inside the C scan as a wrong weight, or inside
-- attnlab.linear), key_mask and keep (B,N); a misspelt key (kep = ...) fails instead of
-- running the mixer unmasked. Returns the keep mask the scan takes (nil: every token).
local function checked_keep(who, x, opts, want, dim)
  nn.MultiHeadAttention.check_forward(who, x, opts, want)
  nn.MultiHeadAttention.check_input(who, x, dim, opts)
  if not opts then return nil end
  local k = opts.keep
  if opts.key_mask then k = k and (k * opts.key_mask) or opts.key_mask end
  return k
end

-- ---- BiLSTM -------------------------------------------------------------------------------
-- Per head h (hd = dim/heads channels) and direction, an LSTM with hidden size hd over the
-- head's channels, PyTorch's equations and layout (gates i, f, g, o): weight_ih_l0
-- (heads, 4hd, hd), weight_hh_l0, bias_ih_l0 (heads, 4hd), bias_hh_l0, and *_reverse for
-- the reverse direction; with heads = 1 they are torch.nn.LSTM(dim, dim, bidirectional)'s
-- tensors with a leading 1. Outputs (head-major, then direction) are projected 2*dim -> dim
-- by out_proj.
local BiLSTM = nn.class("BiLSTM", nn.Module)
nn.BiLSTM = BiLSTM

local LSTM_NAMES = { "weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0",
                     "weight_ih_l0_reverse", "weight_hh_l0_reverse", "bias_ih_l0_reverse", "bias_hh_l0_reverse" }

function BiLSTM:init(opts)
  opts = nn.check_opts("BiLSTM", opts, nn.keyset({ "dim", "heads", "generator" }))
  local dim, heads = opts.dim, opts.heads or 1
  check_int("BiLSTM", "heads", heads, 1)
  if math.type(dim) ~= "integer" or dim <= 0 or dim % heads ~= 0 then
    error(("BiLSTM: dim must be a positive multiple of heads, got dim = %s, heads = %s"):format(nn.show(dim),
      nn.show(heads)), 0)
  end
  self.dim, self.heads, self.hd = dim, heads, dim // heads
  -- what a model file needs to rebuild it (s2s.save_model writes it when the mixer was set by hand)
  self.mixer_spec = { name = "bilstm", heads = heads }
  self.forward_wants = ("a float32 tensor (B,N,%d)"):format(dim)
  local gen = opts.generator
  local bound = 1 / math.sqrt(self.hd)          -- torch.nn.LSTM's init
  for i, n in ipairs(LSTM_NAMES) do
    local shape = ((i - 1) % 4 < 2) and { heads, 4 * self.hd, self.hd } or { heads, 4 * self.hd }
    self:param(n, al.empty(shape)):uniform_(-bound, bound, gen)
  end
  self:add("out_proj", nn.Linear(2 * dim, dim, { generator = gen }))
end

function BiLSTM:forward(x, opts)
  local p = {}
  for i, n in ipairs(LSTM_NAMES) do p[i] = self[n] end
  local y = al.bilstm(x, p, checked_keep("BiLSTM", x, opts, self.forward_wants, self.dim), self.heads)
  return self.out_proj(y)
end

function BiLSTM:extra_repr() return ("dim=%d, heads=%d"):format(self.dim, self.heads) end

-- ---- BiMamba ---------------------------------------------------------------------------------
-- Mamba-1 made bidirectional as Vision Mamba's "v2": in_proj dim -> 2E (x, z), E = expand*dim;
-- per direction (the reverse one on the reversed sequence): depthwise causal conv1d
-- (width d_conv) + SiLU, x_proj -> (dt_rank, B, C), dt = softplus(dt_proj(.) + bias),
-- A = -exp(A_log) (S4D-real init: A_log = log(1..N)), D skip; directions averaged, gated by
-- SiLU(z), out_proj E -> dim. Multi-head: the E inner channels split into `heads` groups;
-- per head are x_proj (and so B_t, C_t and the low-rank dt) -- conv, dt_proj, A_log and D
-- are per channel anyway. Names follow Vim v2 (conv1d/conv1d_b, x_proj/x_proj_b,
-- dt_proj/dt_proj_b, A_log/A_b_log, D/D_b); conv1d weights are (E, d_conv) (Vim: (E,1,d_conv)),
-- x_proj weights (heads, R+2N, E/heads) (Vim, heads = 1: (R+2N, E)).
local BiMamba = nn.class("BiMamba", nn.Module)
nn.BiMamba = BiMamba

local DIRS = { { conv = "conv1d", xp = "x_proj", dt = "dt_proj", A = "A_log", D = "D" },
               { conv = "conv1d_b", xp = "x_proj_b", dt = "dt_proj_b", A = "A_b_log", D = "D_b" } }

function BiMamba:init(opts)
  opts = nn.check_opts("BiMamba", opts, nn.keyset({ "dim", "heads", "expand", "d_state", "d_conv", "dt_rank",
                                                    "dt_min", "dt_max", "generator" }))
  if opts.dim == nil then error("BiMamba: dim is required (BiMamba{dim = D, heads = H})", 0) end
  local dim = check_int("BiMamba", "dim", opts.dim, 1)
  local heads = check_int("BiMamba", "heads", opts.heads or 1, 1)
  local expand = check_int("BiMamba", "expand", opts.expand or 2, 1)
  -- 256: the C scan's limit on the state size (include/attnlab/mixers.h)
  local N = check_int("BiMamba", "d_state", opts.d_state or 16, 1, 256)
  local K = check_int("BiMamba", "d_conv", opts.d_conv or 4, 1)
  local E = expand * dim
  local R = check_int("BiMamba", "dt_rank", opts.dt_rank or math.ceil(dim / 16), 1)
  if E % heads ~= 0 then
    error(("BiMamba: the inner width expand * dim = %d is not divisible by heads = %d"):format(E, heads), 0)
  end
  self.dim, self.heads, self.E, self.N, self.R, self.K = dim, heads, E, N, R, K
  self.forward_wants = ("a float32 tensor (B,N,%d)"):format(dim)
  local gen = opts.generator
  self:add("in_proj", nn.Linear(dim, 2 * E, { bias = false, generator = gen }))
  local dt_min, dt_max = opts.dt_min or 1e-3, opts.dt_max or 0.1
  -- the dt bias is drawn log-uniform in [dt_min, dt_max]: 0 or a NaN would make it NaN or -inf
  if type(dt_min) ~= "number" or type(dt_max) ~= "number" or not (dt_min > 0 and dt_min <= dt_max and dt_max < math.huge) then
    error(("BiMamba: dt_min and dt_max must be numbers with 0 < dt_min <= dt_max, got %s and %s"):format(
      show(dt_min), show(dt_max)), 0)
  end
  -- what a model file needs to rebuild it (s2s.save_model writes it when the mixer was set by hand)
  self.mixer_spec = { name = "bimamba", heads = heads, expand = expand, d_state = N, d_conv = K, dt_rank = R,
                      dt_min = dt_min, dt_max = dt_max }
  for _, d in ipairs(DIRS) do
    local conv = self:add(d.conv, nn.Module())
    conv.__name = "Conv1d"
    local cb = 1 / math.sqrt(K)                 -- PyTorch's Conv1d default, fan_in = K
    conv:param("weight", al.empty({ E, K })):uniform_(-cb, cb, gen)
    conv:param("bias", al.empty({ E })):uniform_(-cb, cb, gen)
    local xp = self:add(d.xp, nn.Module())
    xp.__name = "HeadLinear"
    local xb = 1 / math.sqrt(E // heads)
    xp:param("weight", al.empty({ heads, R + 2 * N, E // heads })):uniform_(-xb, xb, gen)
    local dt = self:add(d.dt, nn.Module())
    dt.__name = "Linear"
    local std = R ^ -0.5
    dt:param("weight", al.empty({ E, R })):uniform_(-std, std, gen)
    -- dt bias: softplus^-1 of dt ~ log-uniform in [dt_min, dt_max] (Mamba's init)
    local u = al.rand({ E }, { generator = gen }):totable()
    local b = {}
    for i = 1, E do
      local v = math.exp(u[i] * (math.log(dt_max) - math.log(dt_min)) + math.log(dt_min))
      v = math.max(v, 1e-4)
      b[i] = v + math.log(1 - math.exp(-v))
    end
    dt:param("bias", al.tensor(b))
    local a = {}
    for e = 1, E do a[e] = {} for n = 1, N do a[e][n] = math.log(n) end end
    self:param(d.A, al.tensor(a))
    self:param(d.D, al.ones({ E }))
  end
  self:add("out_proj", nn.Linear(E, dim, { bias = false, generator = gen }))
end

function BiMamba:params_list()
  local p = {}
  for _, d in ipairs(DIRS) do
    local c, x, t = self[d.conv], self[d.xp], self[d.dt]
    for _, v in ipairs({ c.weight, c.bias or false, x.weight, t.weight, t.bias, self[d.A], self[d.D] }) do p[#p + 1] = v end
  end
  return p
end

function BiMamba:forward(x, opts)
  local keep = checked_keep("BiMamba", x, opts, self.forward_wants, self.dim)
  local xz = self.in_proj(x)
  local y = al.bimamba(xz, self:params_list(), keep, self.heads, self.N, self.R, self.K)
  return self.out_proj(y)
end

function BiMamba:extra_repr()
  return ("dim=%d, heads=%d, inner=%d, d_state=%d, dt_rank=%d, d_conv=%d"):format(self.dim, self.heads, self.E, self.N, self.R, self.K)
end

return nn
