-- attnlab.run.optim_args -- the argument checks of the optimizers (run/optim.lua), apart from
-- the updates they guard: a bad option there was accepted and computed garbage (betas = {2, 3};
-- a negative clipping norm that flips every gradient) or failed later as "attempt to index a
-- number value". Each check raises one line naming the function and the value, or returns.
local al = require "attnlab"
local util = require "attnlab.util"

local A = {}

-- a value in a message: "nan", never printf's "-nan" (0/0 is a negative NaN on x86)
local function show(v)
  if type(v) == "number" then return v ~= v and "nan" or tostring(v) end
  if type(v) == "table" then
    local parts = {}
    for i = 1, math.min(#v, 4) do parts[i] = show(v[i]) end
    return "{" .. table.concat(parts, ", ") .. (#v > 4 and ", ..." or "") .. "}"
  end
  if al.is_tensor(v) then return "a tensor" end
  if type(v) == "string" then return util.show(v) end
  return type(v)
end

-- what a wrong argument is, for "must be a table, got ...": its type
local function kind(v) return al.is_tensor(v) and "a tensor" or type(v) end

-- key of o, if present, must be a finite number with lo <(=) v <= hi (hi may be math.huge:
-- no bound but finiteness); NaN always fails. open_lo: lo itself is refused (an lr of 0).
local function check_range(who, o, key, lo, open_lo, hi)
  local v = o[key]
  if v == nil then return end
  local ok = type(v) == "number" and (open_lo and v > lo or not open_lo and v >= lo) and v <= hi and v < math.huge
  if not ok then
    local text = hi == math.huge and ("a number %s %g (finite)"):format(open_lo and ">" or ">=", lo)
      or ("a number in %s%g, %g]"):format(open_lo and "(" or "[", lo, hi)
    error(("%s: %s must be %s, got %s"):format(who, key, text, show(v)), 0)
  end
end

local function check_betas(who, o)
  local b = o.betas
  if b == nil then return end
  local ok = type(b) == "table" and #b == 2
  for i = 1, 2 do ok = ok and type(b[i]) == "number" and b[i] >= 0 and b[i] < 1 end
  if not ok then error(("%s: betas must be two numbers in [0, 1), got %s"):format(who, show(b)), 0) end
end

-- opts must be nil or a table; each group of a list of groups {params = ..., lr = ...} may
-- override the options, so it is checked the same way (its messages name the group; what it
-- does not set comes from opts). A group that is not a table is left to the optimizer's own
-- check of params (so is a module in the list).
-- Every key of t must be in known (a list): a misspelt option (weigth_decay = 0.1) would
-- otherwise be ignored and the default used, a silently different run.
local function check_keys(who, t, known)
  local bad = util.unknown_keys(t, known)
  if bad then error(("%s: %s"):format(who, bad), 0) end
end
A.check_keys = check_keys

-- The options each optimizer reads; a group {params = ..., ...} also takes params and lr_scale.
A.OPTIONS = { AdamW = { "lr", "betas", "eps", "weight_decay" },
              SGD = { "lr", "momentum", "dampening", "weight_decay", "nesterov" } }

local function check_all(who, params, opts, check)
  if opts ~= nil and type(opts) ~= "table" then
    error(("%s: options must be a table {lr = ..., ...}, got %s"):format(who, kind(opts)), 0)
  end
  opts = opts or {}
  local known = A.OPTIONS[who]
  check_keys(who, opts, known)
  check(who, opts, opts)
  if type(params) == "table" and type(params[1]) == "table" and getmetatable(params[1]) == nil then
    local group_known = { "params", "lr_scale" }
    for _, k in ipairs(known) do group_known[#group_known + 1] = k end
    for gi, g in ipairs(params) do
      if type(g) == "table" and getmetatable(g) == nil then   -- (a module there: make_groups names it)
        check_keys(("%s group %d"):format(who, gi), g, group_known)
        check(("%s group %d"):format(who, gi), g, opts)
        check_range(("%s group %d"):format(who, gi), g, "lr_scale", 0, false, math.huge)
      end
    end
  end
end

local function adamw_opts(who, o)
  check_range(who, o, "lr", 0, true, math.huge)
  check_range(who, o, "eps", 0, true, math.huge)
  check_range(who, o, "weight_decay", 0, false, math.huge)
  check_betas(who, o)
end

local function sgd_opts(who, o, base)
  check_range(who, o, "lr", 0, true, math.huge)
  check_range(who, o, "momentum", 0, false, 1)
  check_range(who, o, "dampening", 0, false, 1)
  check_range(who, o, "weight_decay", 0, false, math.huge)
  if o.nesterov ~= nil and type(o.nesterov) ~= "boolean" then
    error(("%s: nesterov must be true or false, got %s"):format(who, show(o.nesterov)), 0)
  end
  -- as PyTorch: Nesterov momentum without momentum, or with dampening, is not Nesterov's
  local nesterov, momentum = o.nesterov, o.momentum or base.momentum or 0
  local dampening = o.dampening or base.dampening or 0
  if nesterov == nil then nesterov = base.nesterov end
  if nesterov and (momentum <= 0 or dampening ~= 0) then
    error(("%s: nesterov needs a momentum > 0 and dampening 0, got momentum %s, dampening %s")
      :format(who, show(momentum), show(dampening)), 0)
  end
end

-- AdamW(params, opts) and SGD(params, opts): opts and every group's overrides.
function A.adamw(params, opts) check_all("AdamW", params, opts, adamw_opts) end
function A.sgd(params, opts) check_all("SGD", params, opts, sgd_opts) end

-- opt:load_state_dict(sd), checked whole before anything is copied, so a bad state dict leaves
-- the optimizer as it was (the loader sets the step count first, then copies tensor by tensor).
-- The saved state of parameter i ("state.<i>.<name>") has parameter i's shape in both
-- optimizers; a tensor of another shape would be broadcast or refused half-way.
function A.state_dict(self, sd, who)
  if type(sd) ~= "table" then
    error(("%s: the state dict must be a table (from opt:state_dict()), got %s"):format(who, kind(sd)), 3)
  end
  -- a step count ("step", AdamW's "state.<i>.step"): a one-element int64 tensor >= 0; the
  -- message shows a one-element tensor's value ("got int64 -3"), else its dtype and shape
  local function check_count(key, v)
    local n = al.is_tensor(v) and v:numel() == 1 and v:dtype() == "int64" and v:item()
    if not n or n < 0 then
      local got = not al.is_tensor(v) and show(v)
        or v:numel() == 1 and ("%s %s"):format(v:dtype(), util.show(v:reshape({}):item()))
        or ("%s (%s)"):format(v:dtype(), table.concat(v:shape(), ","))
      error(("%s: %s must be a one-element int64 tensor >= 0, got %s"):format(who, key, got), 4)
    end
  end
  if sd.step ~= nil then check_count("step", sd.step) end
  local shapes = {}
  for _, g in ipairs(self.param_groups) do
    for _, p in ipairs(g.params) do shapes[#shapes + 1] = table.concat(p:shape(), ",") end
  end
  -- every key is "step" or "state.<i>.<one of the class's STATE_KEYS>": another optimizer's
  -- state (SGD's momentum_buffer into AdamW) or a misspelt name was skipped, and the run went
  -- on from zero moments without a word
  local names, known = {}, {}
  for _, n in ipairs(self.STATE_KEYS) do known[n] = true end
  for k, v in pairs(sd) do
    local si, name = nil, nil
    if type(k) == "string" then si, name = k:match("^state%.(%d+)%.(.+)$") end
    local i = si and math.tointeger(tonumber(si))
    if k ~= "step" and not (i and known[name]) then
      error(("%s: unknown key '%s' (known: step, state.<i>.<%s>; a state dict of another optimizer?)"):format(who,
        tostring(k), table.concat(self.STATE_KEYS, "|")), 3)
    end
    if i then
      names[i] = names[i] or {}
      names[i][name] = true
      if not shapes[i] then
        error(("%s: %s is for parameter %d, the optimizer has %d (a state dict of another model?)"):format(who, k, i,
          #shapes), 3)
      elseif not al.is_tensor(v) then
        error(("%s: %s must be a tensor, got %s"):format(who, k, show(v)), 3)
      elseif name == "step" then
        check_count(k, v)
      elseif v:dtype() ~= "float32" then
        error(("%s: %s must be float32, got %s"):format(who, k, show(v)), 3)
      elseif table.concat(v:shape(), ",") ~= shapes[i] then
        error(("%s: %s is (%s), parameter %d is (%s)"):format(who, k, table.concat(v:shape(), ","), i, shapes[i]), 3)
      end
    end
  end
  -- a parameter's state is whole or absent (AdamW's exp_avg without exp_avg_sq would restart one
  -- moment from zero); AdamW's per-parameter step may be absent (state dicts written before it
  -- was kept: the optimizer's step then stands for it)
  for i, have in pairs(names) do
    for _, n in ipairs(self.STATE_KEYS) do
      if not have[n] and n ~= "step" then
        local some
        for _, m in ipairs(self.STATE_KEYS) do some = some or (have[m] and m) end
        error(("%s: state.%d.%s is missing, though state.%d.%s is there (a parameter's state is saved whole)")
          :format(who, i, n, i, some), 3)
      end
    end
  end
end

-- opt:set_lr(lr): a finite number >= 0 (0 is where a cosine to min_lr = 0 ends); NaN, inf or
-- a negative lr would be written into every group and ruin the parameters at the next step.
function A.set_lr(self, lr)
  if type(lr) ~= "number" or lr ~= lr or lr < 0 or lr == math.huge then
    error(("%s:set_lr: lr must be a finite number >= 0, got %s"):format(self.name or "optimizer", show(lr)), 0)
  end
end

-- CosineWarmup(opt, opts)
function A.cosine(opt, opts)
  if type(opt) ~= "table" or type(opt.set_lr) ~= "function" then
    error(("CosineWarmup: opt must be an optimizer (al.optim.AdamW or SGD), got %s"):format(kind(opt)), 0)
  end
  if type(opts) ~= "table" then
    error(("CosineWarmup: options {total = steps, warmup =, min_lr =, base_lr =} are required, got %s")
      :format(kind(opts)), 0)
  end
  check_keys("CosineWarmup", opts, { "total", "warmup", "min_lr", "base_lr" })
  for _, key in ipairs({ "total", "warmup" }) do
    local v = opts[key]
    if (key == "total" or v ~= nil)
      and (type(v) ~= "number" or v ~= math.floor(v) or v < (key == "total" and 1 or 0) or v == math.huge) then
      error(("CosineWarmup: %s must be a whole number of steps %s, got %s")
        :format(key, key == "total" and ">= 1" or ">= 0", show(v)), 0)
    end
  end
  check_range("CosineWarmup", opts, "base_lr", 0, true, math.huge)
  check_range("CosineWarmup", opts, "min_lr", 0, false, math.huge)
  -- each group's lr, which becomes its base (a group lr set by hand since the optimizer was made)
  for gi, g in ipairs(opt.param_groups or {}) do
    local lr = g.lr
    if type(lr) ~= "number" or not (lr >= 0 and lr < math.huge) then
      error(("CosineWarmup: group %d's lr must be a finite number >= 0, got %s"):format(gi, type(lr) == "number"
        and show(lr) or lr == nil and "nil" or al.is_tensor(lr) and "a tensor" or "a " .. type(lr)), 0)
    end
  end
  -- the schedule: linear warmup to the base lr over `warmup` steps, then a cosine from the
  -- base lr down to min_lr at step `total`. A min_lr above the base lr would make the "decay"
  -- rise: refused. A warmup longer than the run is allowed: the lr rises for the whole run,
  -- which is what a smoke test that cuts a preset's epochs (--epochs 1) asks for.
  local base = opts.base_lr or opt.lr
  if type(base) ~= "number" or not (base > 0) or base == math.huge then
    error(("CosineWarmup: the base lr (opts.base_lr, else the optimizer's lr) must be a finite number > 0, got %s")
      :format(show(base)), 0)
  end
  local min_lr = opts.min_lr or 0
  if min_lr > base then
    error(("CosineWarmup: min_lr %s is above the base lr %s (%s): the cosine would rise instead of decay; want " ..
      "min_lr <= base lr"):format(show(min_lr), show(base), opts.base_lr and "base_lr" or "the optimizer's lr"), 0)
  end
end

-- opt:step(closure), opt:zero_grad(false), sched:step(epoch) (util.no_argument says why each
-- is refused). n = select("#", ...) of the method's arguments after self.
function A.no_argument(who, why, n, first)
  if n > 0 then util.no_argument(who, why, show(first), 3) end
end

-- clip_grad_norm(params, max_norm [, norm_type]); n_more: the count of arguments after those
function A.clip(params, max_norm, norm_type, n_more)
  if n_more > 0 then
    error(("clip_grad_norm: takes (params, max_norm [, norm_type]), got %d more argument%s (PyTorch's " ..
      "error_if_nonfinite and foreach are not options here)"):format(n_more, n_more > 1 and "s" or ""), 3)
  end
  -- a norm_type was ignored before, and the L2 norm used whatever it said
  if norm_type ~= nil and (type(norm_type) ~= "number" or not (norm_type > 0)) then
    error(("clip_grad_norm: norm_type must be a number > 0 or math.huge (the largest |g|), got %s")
      :format(show(norm_type)), 3)
  end
  if type(params) ~= "table" then
    error(("clip_grad_norm: params must be a list of tensors, got %s"):format(kind(params)), 3)
  end
  -- a group {params = ...} or a number in the list would be skipped: the norm would be too small
  for i, p in ipairs(params) do
    if not al.is_tensor(p) then
      error(("clip_grad_norm: entry %d of params is %s, not a tensor"):format(i,
        type(p) == "table" and p.params and "a group {params = ...} (pass its params)" or show(p)), 3)
    end
  end
  -- a negative max_norm would multiply every gradient by a negative scale
  if max_norm ~= nil and (type(max_norm) ~= "number" or not (max_norm > 0)) then
    error(("clip_grad_norm: max_norm must be a number > 0 (or nil: no clipping), got %s"):format(show(max_norm)), 3)
  end
end

return A
