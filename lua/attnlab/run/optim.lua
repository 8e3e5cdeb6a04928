-- attnlab.run.optim (also attnlab.optim) -- SGD and AdamW with fused C updates, a cosine schedule with
-- warmup, and global-norm gradient clipping.
--
--   local opt = al.optim.AdamW(model:parameters(), {lr = 1e-3, weight_decay = 0.05})
--   local sched = al.optim.CosineWarmup(opt, {warmup = 500, total = 10000})
--   loss:backward(); al.optim.clip_grad_norm(model:parameters(), 1.0); opt:step(); sched:step()
--
-- Parameters may be a list of tensors or a list of groups {params = {...}, weight_decay = 0}
-- whose options override the defaults (e.g. no decay on norms, biases, pos_embed).
local al = require "attnlab"
local check = require "attnlab.run.optim_args"   -- the argument checks, one per public function

local optim = {}

-- A module (al.nn.Module or a subclass) passed where its parameters belong.
local function is_module(v) return al.nn.is_module(v) end

-- what a params argument is, for the messages below
local function what(v)
  if al.is_tensor(v) then return "a tensor" end
  if is_module(v) then
    return ("a module (%s)"):format(v.__name or "Module")
  end
  return v == nil and "nil" or ("a " .. type(v))
end

-- params: a list of tensors, or a list of groups {params = {tensors...}, <option> = ...}. As
-- PyTorch, an optimizer with nothing to train is refused: a module passed instead of its
-- parameters (AdamW(model) read no tensor from it and stepped nothing, silently), an empty
-- list, or groups none of which holds a parameter. One empty group among others is allowed
-- (fit.param_groups makes a decay and a no-decay group, and a stage's filter may leave one
-- empty), but not a group whose params is a module.
local function make_groups(who, params, defaults)
  if type(params) ~= "table" or al.is_tensor(params) or is_module(params) then
    local hint = is_module(params) and "pass model:parameters()"
      or al.is_tensor(params) and "pass a list {t}" or "pass model:parameters() or a list of tensors"
    error(("%s: params must be a list of tensors or of groups {params = {...}}, got %s: %s"):format(who, what(params), hint), 0)
  end
  if params[1] == nil then
    if next(params) ~= nil then
      error(("%s: params must be a list of tensors or of groups {params = {...}}, got a table with no entry 1 " ..
        "(a state dict? pass model:parameters())"):format(who), 0)
    end
    error(("%s: got an empty parameter list"):format(who), 0)
  end
  local groups = {}
  if not al.is_tensor(params[1]) then
    for gi, g in ipairs(params) do
      if type(g) ~= "table" or getmetatable(g) ~= nil or type(g.params) ~= "table" then
        error(("%s: entry %d of params is %s, not a tensor or a group {params = {...}}%s"):format(who, gi, what(g),
          is_module(g) and " (pass its :parameters())" or ""), 0)
      end
      local grp = {}
      for k, v in pairs(defaults) do grp[k] = v end
      for k, v in pairs(g) do grp[k] = v end
      -- A group's lr is its own lr (else the optimizer's) times its lr_scale; lr_scale is then
      -- kept as the group's lr relative to the optimizer's, which set_lr (and so a schedule)
      -- multiplies, as PyTorch's LambdaLR scales each group's own initial lr. A group with
      -- neither keeps lr_scale nil and takes set_lr's lr exactly.
      if g.lr ~= nil or g.lr_scale ~= nil then
        grp.lr = (g.lr or defaults.lr) * (g.lr_scale or 1)
        grp.lr_scale = grp.lr / defaults.lr
      end
      groups[#groups + 1] = grp
    end
  else
    local grp = { params = params }
    for k, v in pairs(defaults) do grp[k] = v end
    groups[1] = grp
  end
  for gi, g in ipairs(groups) do
    if is_module(g.params) then
      error(("%s: group %d's params is %s, not a list of tensors: pass its :parameters()")
        :format(who, gi, what(g.params)), 0)
    end
    for i, p in ipairs(g.params) do
      if not al.is_tensor(p) then error(("%s: group %d entry %d is %s, not a tensor"):format(who, gi, i, what(p)), 0) end
      if p:dtype() ~= "float32" then error(("%s: group %d entry %d is not float32"):format(who, gi, i), 0) end
      -- the steps update a parameter in place as one row-major block (Module:param makes its
      -- tensor contiguous); refused here, not at the first step()
      if not p:is_contiguous() then
        error(("%s: group %d entry %d is a non-contiguous tensor (%s, a transposed or sliced view): a parameter must be " ..
          "contiguous (Module:param copies a view into a contiguous parameter)"):format(who, gi, i,
          table.concat(p:shape(), ",")), 0)
      end
    end
  end
  -- a tensor listed twice would be updated twice per step (its moments too), silently: refused,
  -- as PyTorch refuses a parameter in two groups ({p, p}, or model:parameters() concatenated
  -- with a list that repeats one of them)
  -- Two tensors over one memory (a detach() or view of a parameter, registered as a second
  -- leaf) would be stepped twice per step too, silently: refused by their storage.
  local seen, mem = {}, {}
  for gi, g in ipairs(groups) do
    for i, p in ipairs(g.params) do
      local first = seen[p]
      if first then
        error(("%s: group %d entry %d is the same tensor as group %d entry %d: a parameter listed twice would be " ..
          "updated twice per step"):format(who, gi, i, first[1], first[2]), 0)
      end
      local id = p:storage_id()
      first = mem[id]
      if first then
        error(("%s: group %d entry %d shares its memory with group %d entry %d (one is a view or detach() of the " ..
          "other): it would be updated twice per step; to tie weights, register the same tensor in both modules " ..
          "(m:param(name, other.weight))"):format(who, gi, i, first[1], first[2]), 0)
      end
      seen[p], mem[id] = { gi, i }, { gi, i }
    end
  end
  -- only an optimizer with nothing at all to train is refused (see above)
  local any = false
  for _, g in ipairs(groups) do any = any or g.params[1] ~= nil end
  if not any then error(("%s: every group's params list is empty: nothing to train"):format(who), 0) end
  return groups
end

local Optimizer = {}
Optimizer.__index = Optimizer

function Optimizer:zero_grad(...)
  check.no_argument(self.name .. ":zero_grad", "zero_grad", select("#", ...), ...)
  for _, g in ipairs(self.param_groups) do for _, p in ipairs(g.params) do p.grad = nil end end
end

-- Learning rate of every group (schedulers set it through this).
function Optimizer:set_lr(lr)
  check.set_lr(self, lr)
  for _, g in ipairs(self.param_groups) do g.lr = lr * (g.lr_scale or 1) end
  self.lr = lr
end

-- "step": the number of opt:step() calls; "state.<i>.<name>": parameter i's state (i counts
-- the parameters across groups in order; the names are the class's STATE_KEYS). A parameter
-- that has no state yet (no gradient so far) has no entry.
function Optimizer:state_dict()
  local sd = { ["step"] = al.tensor(self.steps, { dtype = "int64" }) }
  local i = 0
  for _, g in ipairs(self.param_groups) do
    for _, p in ipairs(g.params) do
      i = i + 1
      local st = self.state[p]
      if st then
        for _, k in ipairs(self.STATE_KEYS) do
          local v = st[k]
          if math.type(v) == "integer" then v = al.tensor(v, { dtype = "int64" }) end
          sd[("state.%d.%s"):format(i, k)] = v
        end
      end
    end
  end
  return sd
end

-- Replaces the whole state, as PyTorch's does: a parameter without an entry in sd has no state
-- afterwards (its first step is a first step: SGD's momentum buffer starts as its gradient,
-- AdamW's bias correction counts from 1). sd is checked whole first (check.state_dict).
function Optimizer:load_state_dict(sd)
  check.state_dict(self, sd, self.name .. ":load_state_dict")
  self.steps = sd.step and sd.step:item() or 0
  local i = 0
  for _, g in ipairs(self.param_groups) do
    for _, p in ipairs(g.params) do
      i = i + 1
      self.state[p] = self:_state_from(sd, ("state.%d."):format(i))
    end
  end
end

-- A new optimizer class: its instances find their methods in it, then in Optimizer; calling
-- the class, as in optim.AdamW(params, opts), is calling its new.
local function optimizer_class(name)
  local class = { name = name }   -- (messages: "AdamW:load_state_dict: ...")
  class.__index = class
  return setmetatable(class, { __index = Optimizer, __call = function(c, ...) return c.new(...) end })
end

-- ---- AdamW --------------------------------------------------------------------------
local AdamW = optimizer_class("AdamW")
optim.AdamW = AdamW

function AdamW.new(params, opts)
  check.adamw(params, opts)
  opts = opts or {}
  local betas = opts.betas or { 0.9, 0.999 }
  local defaults = { lr = opts.lr or 1e-3, betas = betas, eps = opts.eps or 1e-8,
                     weight_decay = opts.weight_decay == nil and 0.01 or opts.weight_decay }
  local self = setmetatable({ param_groups = make_groups("AdamW", params, defaults), state = {}, steps = 0,
                              lr = defaults.lr }, AdamW)
  return self
end

-- Per parameter: the two moments and its own step count, which the bias correction uses. A
-- parameter without a gradient at some steps (frozen for a while, unused by a stage's loss)
-- counts only the steps that updated it, as PyTorch's AdamW does; one count per optimizer made
-- its first update after k skipped steps too small (36% at k = 2).
AdamW.STATE_KEYS = { "exp_avg", "exp_avg_sq", "step" }

function AdamW:_state(p)
  local st = self.state[p]
  if not st then
    st = { exp_avg = al.zeros(p:shape()), exp_avg_sq = al.zeros(p:shape()), step = 0 }
    self.state[p] = st
  end
  return st
end

-- A saved state "<prefix>exp_avg", "exp_avg_sq" (and "step"; a state dict written before the
-- count was per parameter has only the optimizer's "step", which then stood for every
-- parameter's), or nil.
function AdamW:_state_from(sd, prefix)
  local m, v = sd[prefix .. "exp_avg"], sd[prefix .. "exp_avg_sq"]
  if not m then return nil end
  local step = sd[prefix .. "step"] or sd.step
  return { exp_avg = m:float():clone(), exp_avg_sq = v:float():clone(), step = step and step:item() or 0 }
end

function AdamW:step(...)
  check.no_argument("AdamW:step", "step", select("#", ...), ...)
  self.steps = self.steps + 1
  for _, g in ipairs(self.param_groups) do
    local b1, b2 = g.betas[1], g.betas[2]
    for _, p in ipairs(g.params) do
      local grad = p.grad
      if grad then
        local st = self:_state(p)
        st.step = st.step + 1
        al.adamw_step(p, grad:contiguous(), st.exp_avg, st.exp_avg_sq, g.lr, b1, b2, g.eps, g.weight_decay, st.step)
      end
    end
  end
end

-- ---- SGD ------------------------------------------------------------------------------
local SGD = optimizer_class("SGD")
optim.SGD = SGD

function SGD.new(params, opts)
  check.sgd(params, opts)
  opts = opts or {}
  local defaults = { lr = opts.lr or 1e-2, momentum = opts.momentum or 0, dampening = opts.dampening or 0,
                     weight_decay = opts.weight_decay or 0, nesterov = opts.nesterov or false }
  return setmetatable({ param_groups = make_groups("SGD", params, defaults), state = {}, steps = 0, lr = defaults.lr }, SGD)
end

-- Per parameter: the momentum buffer, made at its first gradient (which it then is).
SGD.STATE_KEYS = { "momentum_buffer" }

function SGD:_state_from(sd, prefix)
  local buf = sd[prefix .. "momentum_buffer"]
  return buf and { momentum_buffer = buf:float():clone() } or nil
end

function SGD:step(...)
  check.no_argument("SGD:step", "step", select("#", ...), ...)
  self.steps = self.steps + 1
  for _, g in ipairs(self.param_groups) do
    for _, p in ipairs(g.params) do
      if p.grad then
        local st = self.state[p]
        local first = st == nil
        if first then st = { momentum_buffer = al.zeros(p:shape()) }; self.state[p] = st end
        al.sgd_step(p, p.grad:contiguous(), st.momentum_buffer, g.lr, g.momentum, g.dampening, g.weight_decay,
                    g.nesterov, first)
      end
    end
  end
end

-- ---- schedules and clipping -------------------------------------------------------------
-- Linear warmup from 0 to the base lr over `warmup` steps, then cosine decay to min_lr at
-- `total` steps. step() advances one step and sets the optimizer's lr.
local CosineWarmup = {}
CosineWarmup.__index = CosineWarmup
optim.CosineWarmup = setmetatable(CosineWarmup, { __call = function(c, ...) return c.new(...) end })

function CosineWarmup.new(opt, opts)
  check.cosine(opt, opts)
  -- A group whose lr was set by hand since the optimizer was made keeps it as its own base,
  -- relative to the optimizer's (PyTorch's LambdaLR takes each group's lr at construction as its
  -- initial_lr); before, the first set_lr put it back to the optimizer's lr times lr_scale.
  for _, g in ipairs(opt.param_groups) do   -- (each g.lr checked by check.cosine)
    if opt.lr > 0 and g.lr ~= opt.lr * (g.lr_scale or 1) then g.lr_scale = g.lr / opt.lr end
  end
  local self = setmetatable({ opt = opt, base = opts.base_lr or opt.lr, warmup = opts.warmup or 0,
                              total = opts.total, min_lr = opts.min_lr or 0, t = 0 }, CosineWarmup)
  opt:set_lr(self:lr_at(0))
  return self
end

function CosineWarmup:lr_at(t)
  -- a step count: "x" failed inside, NaN gave min_lr and -5 a negative lr
  if type(t) ~= "number" or not (t >= 0 and t < math.huge) then
    error(("CosineWarmup:lr_at: t must be a step count >= 0, got %s"):format(
      type(t) == "number" and require("attnlab.util").show(t) or what(t)), 2)
  end
  if t < self.warmup then return self.base * (t + 1) / self.warmup end
  local span = math.max(1, self.total - self.warmup)
  local q = math.min(1, (t - self.warmup) / span)
  return self.min_lr + 0.5 * (self.base - self.min_lr) * (1 + math.cos(math.pi * q))
end

function CosineWarmup:step(...)
  check.no_argument("CosineWarmup:step", "schedule_step", select("#", ...), ...)
  self.t = self.t + 1
  self.opt:set_lr(self:lr_at(self.t))
  return self.opt.lr
end

-- The largest |g| over all gradients: NaN when one is NaN, else inf when one is infinite.
local function max_abs_grad(params)
  local m = 0
  for _, p in ipairs(params) do
    if p.grad and p.grad:numel() > 0 then
      local v = al.max(al.abs(p.grad)):item()
      if v ~= v then return v end
      m = math.max(m, v)
    end
  end
  return m
end

-- Scale all gradients so their global norm is at most max_norm; returns the norm before
-- clipping (NaN/inf when a gradient is not finite, left unscaled). norm_type: 2 (the default,
-- L2), any other p > 0, or math.huge (the largest |g|), as PyTorch's clip_grad_norm_: the
-- p-norm of all gradients together.
function optim.clip_grad_norm(params, max_norm, norm_type, ...)
  check.clip(params, max_norm, norm_type, select("#", ...))
  norm_type = norm_type or 2
  local norm
  if norm_type == 2 then
    local s = 0
    for _, p in ipairs(params) do if p.grad then s = s + p.grad:sumsq() end end
    norm = math.sqrt(s)
  else
    norm = max_abs_grad(params)
    -- Any other p: sum |g|^p in float32 overflowed (|g| = 1e4, p = 10 is 1e40) to inf, and
    -- the clip was skipped. Scaled by the largest |g|, every term is in [0, 1] and the norm is
    -- m * (sum (|g|/m)^p)^(1/p). m = 0 (all zero) is the norm 0; a non-finite m is returned
    -- as it is, unscaled.
    if norm_type ~= math.huge and norm > 0 and norm < math.huge then
      local s = 0
      for _, p in ipairs(params) do
        if p.grad then s = s + al.sum(al.pow(al.abs(p.grad) / norm, norm_type)):item() end
      end
      norm = norm * s ^ (1 / norm_type)
    end
  end
  if max_norm and norm > max_norm and norm == norm and norm < math.huge then
    local scale = max_norm / (norm + 1e-6)
    for _, p in ipairs(params) do if p.grad then p.grad:mul_(scale) end end
  end
  return norm
end

return optim
