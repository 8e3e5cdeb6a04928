-- attnlab.s2s.halting -- A-ViT token halting (Yin et al., "A-ViT: Adaptive Tokens for
-- Efficient Vision Transformer", CVPR 2022) around an al.nn.ViT, in two execution modes.
--
-- After every block l, token i gets a halting score from its FIRST embedding channel
-- (no extra parameters; A-ViT sec. 3.1, eq. 4):
--     h_l[i] = sigmoid(gate_scale * x_l[i, 1] - gate_center)          (B, N)
-- with A-ViT's defaults gate_scale = 10, gate_center = 30 (their DeiT-Tiny run). The
-- class token never halts here (h = 0 for it); at the last layer h = 1 for every token.
-- Cumulative halting and the remainder (A-ViT eq. 5-7, ACT's rule):
--     c_l = c_{l-1} + h_l;   a token halts at the first l with c_l >= 1 - eps (eps 0.01)
--     R   = 1 - sum of h over the layers BEFORE the halting layer (the remainder)
--     rho = (number of layers the token was processed) + R   (the ponder cost, eq. 8)
--     ponder loss = mean over (batch, tokens) of rho, weighted by ponder_weight (5e-4).
-- (A-ViT tests c > 1-eps and c < 1-eps, leaving c == 1-eps in neither; here "halted" is
-- c >= 1-eps and "running" its complement.)
-- Distributional prior (A-ViT eq. 10): per layer, the halting scores of the running
-- non-class tokens summed over the batch and divided by B * (N - 1) (every non-class token,
-- running or not: a constant over layers, which the next step cancels), normalised over
-- layers to a distribution q, clamped to [0.01, 0.99]; KL(p || q) to a Gaussian p over
-- layers 1..L centred at the target depth (std 1), divided by L as A-ViT's
-- KLDivLoss(reduction="batchmean") over a 1-D input does; weight distr_weight (1e-3).
-- A-ViT rescales its target so its first 8 (of 12) entries sum to 0.98; here p is a
-- proper distribution (sums to 1). The target depth is target_depth, or keep_rate * L (a
-- token halting after layer l was processed by l of L layers, so the mean keep rate is
-- E[halting layer] / L); default 0.75 * L, which is A-ViT's 0-based centre 8 of 12 =
-- layer 9.
--
-- Meeting the target keep rate (issue 20). With the losses above alone the measured keep
-- rate does not follow the target: the prior's KL compares the layer profile of the MEAN
-- halting scores, normalised to sum 1 over layers, with p -- a shape that says nothing about
-- when the cumulative sum of a token's scores crosses 1 - eps (a flat profile of small
-- scores and one of large scores normalise alike) -- and the ponder term, the only one that
-- prices depth, has a fixed small weight that cross-entropy outweighs, so tokens run deeper
-- than the target. A feedback controller (H.Controller) closes the loop on the batch's
-- measured keep rate (keep: the mean over layers, as H.keep_rates measures it; target:
-- target_depth / L), after every training step, through one of two actuators:
--   center_eta > 0   the gate centre is the controller's state:
--                      gate_center <- clamp(gate_center - center_eta * (keep - target))
--                    A lower centre raises every score, so tokens halt sooner. The keep rate
--                    answers a centre change at the very next batch (no optimizer in the
--                    loop), so the integral action settles instead of winding up; the
--                    weights then adapt to the centre through the usual losses. The centre
--                    stays within gate_center +- center_range (default 3 * gate_scale: the
--                    first channel's threshold moves by at most 3), so an unreachable target
--                    (e.g. below the 1 / L that the first layer alone gives) cannot drive
--                    it off. The final centre is the model's: s2s.avit saves it with the
--                    model's halting config.
--   keep_eta > 0     dual ascent on the ponder weight, a Lagrange multiplier of the
--                    constraint "keep = target":
--                      lambda <- max(keep_lambda_min, lambda + keep_eta * (keep - target))
--                    starting from ponder_weight; the ponder loss is weighted by lambda.
--                    keep_lambda_min (default 0) is lambda's floor: 0 makes the constraint
--                    "keep <= target"; a negative floor lets lambda reward depth. Its effect
--                    goes through the optimizer (the step size, Adam's moments, a learning
--                    rate that decays to ~0 at the end of a cosine schedule), so lambda lags
--                    the keep rate and winds up: in smoke runs at targets 0.5 / 0.65 / 0.8 it
--                    did not separate the measured rates (the centre does; RESULTS.md).
-- Both may be on. The controller's state (lambda, centre) is training state: fit's
-- checkpoint carries it. Neither set (the default) is A-ViT as published.
-- Masking: a halted token is masked out of every later layer: it is no longer a key
-- (zero attention weight under every normalizer, absent for BiMamba/BiLSTM) and its
-- residual updates are multiplied by 0 (EncoderBlock's opts.keep). Its state is frozen;
-- only the class token reaches the head, so A-ViT's halting-weighted output sum reduces
-- to the last class-token state and is not formed.
--
-- Modes. "masked": every layer runs on all N tokens with a keep mask (no speed-up, as
-- A-ViT's users found). "gather": after each layer the running tokens of each sample are
-- gathered (in order) into a shorter batch, padded to the longest sample with a key mask,
-- so later layers only compute on running tokens. The two agree up to float rounding
-- (tests/lua/test_s2s.lua checks logits, keep counts and the ponder cost).
local al = require "attnlab"

local H = {}

-- The keep rate when none is given: A-ViT's 0-based centre 8 of 12 layers = layer 9 = 0.75.
-- Also the study scripts' main A-ViT keep rate when a preset names none (s2s.main_keep_rate).
H.DEFAULT_KEEP_RATE = 0.75

H.DEFAULTS = { gate_scale = 10, gate_center = 30, eps = 0.01, ponder_weight = 5e-4, distr_weight = 1e-3,
               target_depth = nil, keep_rate = nil, distr_std = 1, keep_eta = nil, center_eta = nil }
H.OPTIONS = { gate_scale = true, gate_center = true, eps = true, ponder_weight = true, distr_weight = true,
              target_depth = true, keep_rate = true, distr_std = true, depth = true, keep_eta = true,
              keep_lambda_min = true, center_eta = true, center_range = true }

-- The keep-rate controller the presets use (see the header): per step, the gate centre
-- moves by center_eta per unit of keep-rate error.
H.SUGGESTED_CENTER_ETA = 2

-- A halting config for a model of `depth` layers: user keys over DEFAULTS, target_depth
-- resolved. true means the defaults.
function H.config(user, depth)
  if user == nil or user == false then return nil end
  local c = {}
  for k, v in pairs(H.DEFAULTS) do c[k] = v end
  if type(user) == "table" then
    for k, v in pairs(user) do
      if not H.OPTIONS[k] then
        local names = {}
        for n in pairs(H.OPTIONS) do names[#names + 1] = n end
        table.sort(names)
        error(("halting: unknown option '%s'; valid: %s"):format(tostring(k), table.concat(names, ", ")), 2)
      end
      c[k] = v
    end
  end
  -- finite: an inf scale or weight makes every score or loss NaN at the first step
  for _, k in ipairs({ "gate_scale", "gate_center", "eps", "ponder_weight", "distr_weight", "distr_std" }) do
    if type(c[k]) ~= "number" or c[k] ~= c[k] or c[k] == math.huge or c[k] == -math.huge then
      error(("halting: %s must be a finite number, got %s"):format(k, al.cli.show(c[k])), 2)
    end
  end
  if not (c.eps > 0 and c.eps < 1) then error(("halting: eps must be in (0, 1), got %g"):format(c.eps), 2) end
  if c.keep_rate ~= nil and not (type(c.keep_rate) == "number" and c.keep_rate > 0 and c.keep_rate <= 1) then
    error(("halting: keep_rate must be in (0, 1], got %s"):format(al.cli.show(c.keep_rate)), 2)
  end
  if c.keep_eta ~= nil and not (type(c.keep_eta) == "number" and c.keep_eta >= 0 and c.keep_eta < math.huge) then
    error(("halting: keep_eta must be a finite number >= 0, got %s"):format(al.cli.show(c.keep_eta)), 2)
  end
  if c.keep_eta == 0 then c.keep_eta = nil end
  for _, k in ipairs({ "center_eta", "center_range" }) do
    if c[k] ~= nil and not (type(c[k]) == "number" and c[k] >= 0 and c[k] < math.huge) then
      error(("halting: %s must be a finite number >= 0, got %s"):format(k, al.cli.show(c[k])), 2)
    end
  end
  if c.center_eta == 0 then c.center_eta = nil end
  if c.keep_lambda_min ~= nil and not (type(c.keep_lambda_min) == "number" and c.keep_lambda_min <= 0) then
    error(("halting: keep_lambda_min must be a number <= 0, got %s"):format(al.cli.show(c.keep_lambda_min)), 2)
  end
  -- a config read from a model file or a command line carries these too (H.config's output)
  if c.depth ~= nil and (math.type(c.depth) ~= "integer" or c.depth < 1) then
    error(("halting: depth must be a positive integer, got %s"):format(al.cli.show(c.depth)), 2)
  end
  if c.target_depth ~= nil and not (type(c.target_depth) == "number" and c.target_depth > 0 and c.target_depth < math.huge) then
    error(("halting: target_depth must be a finite number > 0, got %s"):format(al.cli.show(c.target_depth)), 2)
  end
  c.depth = depth or c.depth
  if c.depth then c.target_depth = c.target_depth or (c.keep_rate or H.DEFAULT_KEEP_RATE) * c.depth end
  return c
end

-- The keep-rate controller of a halting config (nil when neither keep_eta nor center_eta is set):
--   ctl.lambda            the ponder weight to use at the next step
--   ctl.center            the gate centre to use at the next step
--   ctl:update(keep)      one step of the rules in the header; returns lambda
--   ctl:config(cfg)       cfg with the controller's current gate centre (a copy)
--   ctl:state()/ctl:load(st)  {lambda =, center =} for checkpoints (Lua numbers: JSON keeps them exact)
local Controller = {}
Controller.__index = Controller
H.Controller = Controller

function H.controller(cfg)
  if not cfg or not (cfg.keep_eta or cfg.center_eta) then return nil end
  assert(cfg.depth and cfg.target_depth, "halting: the controller needs depth and target_depth (H.config(c, depth))")
  local range = cfg.center_range or 3 * cfg.gate_scale
  return setmetatable({ lambda = cfg.ponder_weight, eta = cfg.keep_eta, target = cfg.target_depth / cfg.depth,
                        lo = cfg.keep_lambda_min or 0, center = cfg.gate_center, center_eta = cfg.center_eta,
                        center_lo = cfg.gate_center - range, center_hi = cfg.gate_center + range }, Controller)
end

function Controller:update(keep)
  local err = keep - self.target
  if self.eta then self.lambda = math.max(self.lo, self.lambda + self.eta * err) end
  if self.center_eta then
    self.center = math.min(self.center_hi, math.max(self.center_lo, self.center - self.center_eta * err))
  end
  return self.lambda
end

function Controller:config(cfg)
  local c = {}
  for k, v in pairs(cfg) do c[k] = v end
  c.gate_center = self.center
  return c
end

function Controller:state() return { lambda = self.lambda, center = self.center } end

function Controller:load(st)
  if st and st.lambda ~= nil then self.lambda = st.lambda end
  if st and st.center ~= nil then self.center = st.center end
end

-- Gaussian target over layers 1..L (a Lua list summing to 1).
function H.prior(depth, target_depth, std)
  std = std or 1
  local p, s = {}, 0
  for l = 1, depth do
    p[l] = math.exp(-0.5 * ((l - target_depth) / std) ^ 2)
    s = s + p[l]
  end
  for l = 1, depth do p[l] = p[l] / s end
  return p
end

-- Halting scores of the tokens x (B,N,D) -> (B,N): sigmoid(scale * x[..., 1] - center).
function H.score(x, cfg)
  return al.sigmoid(x:select(3, 1) * cfg.gate_scale - cfg.gate_center)
end

-- (1, N) float: 0 for the class token (position 1), 1 elsewhere.
local function not_cls(N)
  local t = {}
  for i = 1, N do t[i] = i == 1 and 0 or 1 end
  return al.tensor({ t })
end
H.not_cls = not_cls

-- Fresh halting state for B x N tokens: c = 0, R = 1, keep = 1, rho = 0 (all (B,N)).
function H.init_state(B, N)
  return { c = al.zeros({ B, N }), R = al.ones({ B, N }), keep = al.ones({ B, N }), rho = al.zeros({ B, N }),
           ponder_sum = 0, depth = 0 }
end

-- One layer of cumulative halting (A-ViT eq. 5-8). st: c, R, keep, rho (B,N); h (B,N)
-- the layer's scores (the caller zeroes the class token); last: force h = 1.
-- Returns the new state; st.halted (B,N) marks tokens that halted at this layer, and
-- ponder_sum accumulates sum(keep) + sum(R * halted) as a scalar tensor.
function H.step(st, h, last, eps)
  local keep = st.keep
  if last then h = al.ones_like(keep) end
  local c = st.c + h
  local halted = al.ge(c, 1 - eps) * keep            -- reach the threshold at this layer
  local running = (1 - al.ge(c, 1 - eps)) * keep
  local rho = st.rho + keep + st.R * halted          -- layers used, plus the remainder
  local pond = al.sum(keep) + al.sum(st.R * halted)
  local R = st.R - running * h                       -- remainder shrinks while running
  return { c = c, R = R, keep = running, rho = rho, halted = halted, depth = st.depth + 1,
           ponder_sum = st.ponder_sum + pond }
end

-- KL(p || q) / L, q = layer means normalised and clamped to [0.01, 0.99] (A-ViT eq. 10).
-- means: list of L scalar tensors; prior: list of L numbers.
function H.distr_loss(means, prior)
  local L = #means
  local m = al.stack(means, 1)                       -- (L)
  local q = al.clamp(m / al.sum(m), 0.01, 0.99)
  local p = al.tensor(prior)
  return al.sum(p * (al.log(p) - al.log(q))) / L
end

-- ---- the forward pass ----------------------------------------------------------------------
-- Token embedding of a ViT: [cls; patches] + pos_embed, (B, N, D).
function H.embed(model, x) return model:embed(x) end

-- Head on the class token of the final states h (B, N, D) -> logits (B, classes).
function H.head(model, h)
  return model.head(model.norm(h:select(2, 1)))
end

local function merge(a, b)
  if a and b then return a * b end
  return a or b
end

-- Run a ViT with halting. x: the model's input; opts:
--   halting  a config (H.config) or nil: the model's own halting decides the masks
--   masks    list of L keep masks (B,N) to use instead (e.g. a teacher's); halting
--            scores are still computed when `halting` is given (for alignment losses)
--   mode     "masked" (default) or "gather" (drops halted tokens from the computation;
--            see H.forward_gather; min_group = smallest group of samples, default 8)
--   record   keep the per-layer mixer outputs (info.mixed[l], (B,N,D); masked mode)
--   key_mask (B,N) padding mask (text); combined with the keep masks
-- Returns logits, info = { keep = {L masks (B,N) used at each layer}, scores = {L (B,N)},
--   channel = {L (B,N): x[...,1] after each block}, mixed = {...}, rho (B,N) (masked mode),
--   ponder (scalar tensor: mean rho over B*N), distr (scalar tensor), active = {L numbers:
--   running tokens per layer, summed over the batch}, tokens = N, batch = B }; in gather
--   mode instead of keep/scores/channel/mixed/rho: depth = {B lists of N numbers: layers
--   each token was processed}, padded = {L: tokens computed, padding included}, groups.
function H.forward(model, x, opts)
  opts = opts or {}
  local mode = opts.mode or "masked"
  if mode == "gather" then return H.forward_gather(model, x, opts) end
  if mode ~= "masked" then error(("halting forward: mode must be 'masked' or 'gather', got '%s'"):format(tostring(mode)), 2) end
  local cfg = opts.halting and H.config(opts.halting, model.depth)
  local masks = opts.masks
  local L = model.depth
  if masks and #masks ~= L then
    error(("halting forward: %d masks given for a model of depth %d"):format(#masks, L), 2)
  end
  local h = H.embed(model, x)
  local s = h:shape()
  local B, N = s[1], s[2]
  local info = { keep = {}, scores = {}, channel = {}, mixed = {}, active = {}, tokens = N, batch = B, means = {} }
  local st = cfg and H.init_state(B, N)
  if st and opts.key_mask then st.keep = opts.key_mask * 1 end   -- padding never runs
  local nc = not_cls(N)
  for l = 1, L do
    local keep = masks and masks[l] or (st and st.keep) or nil
    if l == 1 and not masks and not opts.key_mask then keep = nil end   -- everything runs
    if keep then
      local ks = keep:shape()
      if #ks ~= 2 or ks[1] ~= B or ks[2] ~= N then
        error(("halting forward: mask %d is (%s), want (%d,%d)"):format(l, table.concat(ks, ","), B, N), 2)
      end
    end
    local km = merge(keep, opts.key_mask)
    local mixed
    h, mixed = model.blocks:call_child(l - 1, h, km and { keep = km } or nil)
    info.keep[l] = keep or al.ones({ B, N })
    info.active[l] = keep and math.floor(al.sum(keep):item() + 0.5) or B * N
    if opts.record then info.mixed[l] = mixed end
    if cfg then
      info.channel[l] = h:select(3, 1)
      local sc = H.score(h, cfg) * nc
      info.scores[l] = sc
      local run = merge(keep, opts.key_mask) or al.ones({ B, N })
      info.means[l] = al.sum(sc * run) / (B * (N - 1))
      st = H.step(st, sc, l == L, cfg.eps)
    end
  end
  local logits = H.head(model, h)
  if cfg then
    info.rho = st.rho
    info.ponder = st.ponder_sum / (B * N)
    info.distr = H.distr_loss(info.means, H.prior(L, cfg.target_depth, cfg.distr_std))
    info.cfg = cfg
  end
  return logits, info
end

-- Gather mode: identical decisions, but each layer runs on the running tokens only.
-- Samples differ a lot in how many tokens halt (some images keep every token), so padding
-- the whole batch to its longest sample would recover little. After every layer the
-- samples of each group are sorted by running-token count and split into groups of
-- similar length (a new group starts when the count falls below 3/4 of the group's
-- longest, groups keep >= opts.min_group samples, default 8); each group is compacted --
-- per sample, its running tokens in their original order (so sequential mixers see the
-- same sequences as in masked mode), padded to the group's longest sample with masked
-- copies of the class token -- and runs the next layer as its own batch. Groups only
-- split, never merge. The class tokens are put back in the batch order for the head.
-- Decisions come from the model's own halting (opts.halting, default config) or from
-- forced masks (opts.masks, L masks (B,N) in original token positions; a token dropped at
-- layer l stays dropped -- masks are intersected over layers). info.padded[l] = tokens
-- actually computed at layer l (padding included), info.groups[l] = number of groups.
function H.forward_gather(model, x, opts)
  local masks = opts.masks
  local cfg = (opts.halting or not masks) and H.config(opts.halting or true, model.depth) or nil
  local L = model.depth
  local min_group = opts.min_group or 8
  if masks and #masks ~= L then
    error(("halting forward: %d masks given for a model of depth %d"):format(#masks, L), 2)
  end
  local h0 = H.embed(model, x)
  local s = h0:shape()
  local B, N, D = s[1], s[2], s[3]
  local mt = {}
  if masks then
    for l = 1, L do
      local ks = masks[l]:shape()
      if #ks ~= 2 or ks[1] ~= B or ks[2] ~= N then
        error(("halting forward: mask %d is (%s), want (%d,%d)"):format(l, table.concat(ks, ","), B, N), 2)
      end
      mt[l] = masks[l]:totable()
    end
  end
  local info = { active = {}, tokens = N, batch = B, means = {}, padded = {}, groups = {} }
  -- a group: h (Bg,Lg,D), st {c,R,keep,rho} (Bg,Lg), ids (original sample numbers),
  -- pos[i][j] = original position of the group's token j of sample i
  local g0 = { h = h0, st = H.init_state(B, N), ids = {}, pos = {}, Lg = N, all_on = not opts.key_mask and not masks }
  if opts.key_mask then g0.st.keep = opts.key_mask * 1 end
  if masks then g0.st.keep = g0.st.keep * masks[1] end
  local depth = {}
  for b = 1, B do
    local row, drow = {}, {}
    for j = 1, N do row[j] = j; drow[j] = 0 end
    g0.ids[b], g0.pos[b], depth[b] = b, row, drow
  end
  local groups = { g0 }
  local ponder = 0
  for l = 1, L do
    local act, padded, msum = 0, 0, 0
    local next_groups = {}
    for _, g in ipairs(groups) do
      local Bg, Lg = #g.ids, g.Lg
      local keep = g.st.keep
      local mixed
      g.h, mixed = model.blocks:call_child(l - 1, g.h, (not (l == 1 and g.all_on)) and { keep = keep } or nil)
      padded = padded + Bg * Lg
      local kt = keep:totable()
      for i = 1, Bg do
        local kb, pb, db = kt[i], g.pos[i], depth[g.ids[i]]
        for j = 1, Lg do if kb[j] ~= 0 then act = act + 1; db[pb[j]] = db[pb[j]] + 1 end end
      end
      if cfg then
        local sc = H.score(g.h, cfg) * not_cls(Lg)
        local m = al.sum(sc * keep)
        msum = (msum == 0) and m or (msum + m)
        g.st = H.step(g.st, sc, l == L, cfg.eps)
        ponder = (ponder == 0) and g.st.ponder_sum or (ponder + g.st.ponder_sum)
        g.st.ponder_sum = 0
      end
      if l < L then
        -- running tokens per sample: own halting, or the forced next mask
        local run
        if masks then
          local nxt = mt[l + 1]
          run = {}
          for i = 1, Bg do
            local r, kb, pb, nb = {}, kt[i], g.pos[i], nxt[g.ids[i]]
            for j = 1, Lg do r[j] = (kb[j] ~= 0 and nb[pb[j]] ~= 0) and 1 or 0 end
            run[i] = r
          end
        else
          run = g.st.keep:totable()
        end
        local lists = {}
        for i = 1, Bg do
          local li = {}
          for j = 1, Lg do if run[i][j] ~= 0 then li[#li + 1] = j end end
          if li[1] ~= 1 then table.insert(li, 1, 1) end   -- the class token always runs
          lists[i] = li
        end
        -- sort the samples by running count (descending) and cut into groups
        local order = {}
        for i = 1, Bg do order[i] = i end
        table.sort(order, function(a, b2)
          if #lists[a] ~= #lists[b2] then return #lists[a] > #lists[b2] end
          return a < b2
        end)
        local cuts, start = {}, 1
        for k = 2, Bg do
          local head = #lists[order[start]]
          if #lists[order[k]] < 0.75 * head and k - start >= min_group and Bg - k + 1 >= min_group then
            cuts[#cuts + 1] = { start, k - 1 }
            start = k
          end
        end
        cuts[#cuts + 1] = { start, Bg }
        local unchanged = #cuts == 1 and #lists[order[1]] == Lg
        if unchanged then
          next_groups[#next_groups + 1] = g          -- nothing to drop or split
        else
          local fh = g.h:reshape({ Bg * Lg, D })
          local fc, fR, frho = g.st.c:reshape({ Bg * Lg }), g.st.R:reshape({ Bg * Lg }), g.st.rho:reshape({ Bg * Lg })
          for _, cut in ipairs(cuts) do
            local Ls = #lists[order[cut[1]]]
            local flat, vmask, ids, pos = {}, {}, {}, {}
            for k = cut[1], cut[2] do
              local i = order[k]
              local li, vr, pr = lists[i], {}, {}
              for j = 1, Ls do
                local src = li[j]
                flat[#flat + 1] = (i - 1) * Lg + (src or 1)
                vr[j] = (src and run[i][src] ~= 0) and 1 or 0
                pr[j] = src and g.pos[i][src] or 0
              end
              vmask[#vmask + 1], ids[#ids + 1], pos[#pos + 1] = vr, g.ids[i], pr
            end
            local Bs = #ids
            local it = al.tensor(flat, { dtype = "int64" })
            local function sel(t) return al.index_select(t, 1, it):reshape({ Bs, Ls }) end
            next_groups[#next_groups + 1] = {
              h = al.index_select(fh, 1, it):reshape({ Bs, Ls, D }), ids = ids, pos = pos, Lg = Ls,
              st = { c = sel(fc), R = sel(fR), rho = sel(frho), keep = al.tensor(vmask), ponder_sum = 0, depth = l } }
          end
        end
      else
        next_groups[#next_groups + 1] = g
      end
    end
    info.active[l], info.padded[l], info.groups[l] = act, padded, #groups
    if cfg then info.means[l] = msum / (B * (N - 1)) end
    groups = next_groups
  end
  -- class tokens back in batch order
  local cls, where = {}, {}
  local k = 0
  for _, g in ipairs(groups) do
    cls[#cls + 1] = g.h:select(2, 1)
    for _, id in ipairs(g.ids) do k = k + 1; where[id] = k end
  end
  local hc = #cls == 1 and cls[1] or al.cat(cls, 1)
  local inv = {}
  for b = 1, B do inv[b] = where[b] end
  local identity = true
  for b = 1, B do if inv[b] ~= b then identity = false break end end
  if not identity then hc = al.index_select(hc, 1, al.tensor(inv, { dtype = "int64" })) end
  local logits = model.head(model.norm(hc))
  if cfg then
    info.ponder = ponder / (B * N)
    info.distr = H.distr_loss(info.means, H.prior(L, cfg.target_depth, cfg.distr_std))
    info.cfg = cfg
  end
  info.depth = depth
  return logits, info
end

-- Per-token number of layers processed, from a masked-mode info: {B lists of N}.
function H.depth_of(info)
  local B, N = info.batch, info.tokens
  local d = {}
  for b = 1, B do
    local row = {}
    for j = 1, N do row[j] = 0 end
    d[b] = row
  end
  for _, k in ipairs(info.keep) do
    local kt = k:totable()
    for b = 1, B do for j = 1, N do if kt[b][j] ~= 0 then d[b][j] = d[b][j] + 1 end end end
  end
  return d
end

-- Keep rate per layer (fraction of the B*N tokens running at each layer) and overall.
function H.keep_rates(info)
  local r, s = {}, 0
  local tot = info.batch * info.tokens
  for l, a in ipairs(info.active) do r[l] = a / tot; s = s + r[l] end
  return r, s / #info.active
end

return H
