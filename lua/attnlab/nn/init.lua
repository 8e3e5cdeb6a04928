-- attnlab.nn -- modules in Lua on top of the differentiable C ops.
--
-- A module holds parameters (and child modules), never scratch buffers. Children and
-- parameters are kept in registration order so state_dict() and parameters() are
-- deterministic. Module names follow timm where a model is meant to load timm
-- checkpoints (fc1/fc2, norm1, attn.qkv, ...).
local al = require "attnlab"
local util = require "attnlab.util"

local nn = {}

-- ---- classes ------------------------------------------------------------------
function nn.class(name, parent)
  local cls = {}
  cls.__name = name
  cls.__index = cls
  cls.__call = function(self, ...)
    local f = self.forward   -- nn.Module()(x) said "attempt to call a nil value (method 'forward')"
    if not f then error(("%s: the module has no forward method"):format(self.__name or "Module"), 2) end
    return f(self, ...)
  end
  cls.__tostring = function(self) return self:tree() end
  -- A forward defined on the class (function C:forward(x)) is guarded against m.forward(x), what
  -- a PyTorch hand writes: the dot passes x as the module, and the forward then failed deep
  -- inside ("attempt to call a nil value (method 'forward_features')"). The guard's call is a
  -- tail call, so error levels and tracebacks inside forward are as without it.
  local function guard_forward(c, k, v)
    if k == "forward" and type(v) == "function" then
      local f = v
      v = function(self, ...)
        if type(self) ~= "table" then
          error(("%s.forward called with '.': m.forward(x) passes x as the module; write m:forward(x) or m(x)")
            :format(name), 2)
        end
        return f(self, ...)
      end
    end
    rawset(c, k, v)
  end
  if parent then setmetatable(cls, { __index = parent, __newindex = guard_forward, __call = function(c, ...) return c.new(...) end })
  else setmetatable(cls, { __newindex = guard_forward, __call = function(c, ...) return c.new(...) end }) end
  cls.__newindex = function(m, k, v) return nn.assign_field(m, k, v) end
  cls.new = function(...)
    local self = setmetatable({ _param_names = {}, _params = {}, _child_names = {}, _children = {},
                                _buffer_names = {}, _buffers = {}, training = true }, cls)
    if self.init then self:init(...) end
    return self
  end
  cls.parent = parent
  return cls
end

local Module = nn.class("Module")
nn.Module = Module

-- A parameter is a leaf tensor that requires grad.
local function is_parameter(t) return al.is_tensor(t) and t.is_leaf and t.requires_grad end

-- Register a parameter (a float32 tensor, made a leaf that requires grad). A tensor that already
-- is a parameter (another module's weight) is registered itself: both modules then hold one
-- parameter (weight tying, PyTorch's head.weight = emb.weight), which parameters() lists once
-- and an optimizer updates once. Any other tensor is detached into a new leaf that shares its
-- memory; a non-contiguous one is copied first (the optimizers update a parameter in place, as
-- one row-major block).
function Module:param(name, t)
  if not al.is_tensor(t) then   -- a module author's mistake: the position is their init
    error(("param: expected a tensor for %s, got %s"):format(tostring(name), type(t)), 2)
  end
  -- (requires_grad_ refused it below, from this file's line: "nn/init.lua:72: attnlab.requires_grad_")
  if t:dtype() ~= "float32" then
    error(("param: %s must be a float32 tensor (only those take gradients), got %s; keep it with :buffer"):format(
      tostring(name), t:dtype()), 2)
  end
  if not (is_parameter(t) and t:is_contiguous()) then
    t = t:detach()
    if not t:is_contiguous() then t = t:contiguous() end
    t:requires_grad_(true)
  end
  if self._params[name] == nil then table.insert(self._param_names, name) end
  self._params[name] = t
  rawset(self, name, t)
  return t
end

-- What `m.name = v` does for a name m has no field for yet (the instances' __newindex), as
-- PyTorch's Module.__setattr__: a module becomes a child (m:add), a parameter -- a leaf tensor
-- that requires grad -- a parameter (m:param); anything else is a plain field. Without it,
-- `self.fc = nn.Linear(4, 2)` in an init gave a module whose parameters() missed fc: never
-- trained, never saved, silently. Assigning to a name already registered is caught by
-- nn.sync_registered.
function nn.assign_field(m, k, v)
  if type(k) == "string" and rawget(m, "_children") then
    if nn.is_module(v) then return m:add(k, v) end
    if is_parameter(v) then return m:param(k, v) end
  end
  rawset(m, k, v)
end

-- A name registered by param, buffer or add whose field was then assigned anew (`m.weight =
-- other.weight`, `block.attn = MyMixer()`) is registered anew, as PyTorch's __setattr__ does:
-- before, state_dict(), parameters() and the forward's call_child kept the old tensor or module
-- while m.weight showed the new one. A value of another kind is refused in one line (PyTorch:
-- "cannot assign 'Tensor' as parameter 'weight'").
local function reassigned(m, kind, n, v)
  local who = ("%s.%s"):format(m.__name or "Module", n)
  if kind == "param" then
    if is_parameter(v) then return m:param(n, v) end
    error(("%s is a parameter and was assigned %s: assign a parameter (a leaf tensor that requires grad), " ..
      "or register a tensor with %s:param(%q, t)"):format(who, al.is_tensor(v) and "a tensor that " .. (v.is_leaf and
      "does not require grad" or "is the result of an op (not a leaf)") or nn.show(v), m.__name or "m", n), 0)
  elseif kind == "buffer" then
    if al.is_tensor(v) then return m:buffer(n, v) end
    error(("%s is a buffer, but was assigned %s: assign a tensor"):format(who, nn.show(v)), 0)
  end
  if nn.is_module(v) then return m:add(n, v) end
  error(("%s is a child module, but was assigned %s: assign a module"):format(who, nn.show(v)), 0)
end
function nn.sync_registered(m)
  for _, n in ipairs(m._param_names) do
    local v = rawget(m, n)
    if v ~= m._params[n] then reassigned(m, "param", n, v) end
  end
  for _, n in ipairs(m._buffer_names) do
    local v = rawget(m, n)
    if v ~= m._buffers[n] then reassigned(m, "buffer", n, v) end
  end
  for _, n in ipairs(m._child_names) do
    local v = rawget(m, n)
    if v ~= m._children[n] then reassigned(m, "child", n, v) end
  end
end

-- A non-trainable tensor saved in state_dict (e.g. running statistics).
function Module:buffer(name, t)
  -- a number was taken, and the module's own state dict then failed to load ("count: not a
  -- tensor") and to save
  if not al.is_tensor(t) then
    error(("buffer: expected a tensor for %s, got %s"):format(tostring(name), type(t)), 2)
  end
  if self._buffers[name] == nil then table.insert(self._buffer_names, name) end
  self._buffers[name] = t
  rawset(self, name, t)
  return t
end

-- Register (or replace) a child module.
function Module:add(name, m)
  if not nn.is_module(m) then   -- a number child was taken, and broke modules(), tree() and forward later
    error(("%s:add: the child %s must be a module (an nn.Module instance), got %s"):format(self.__name or "Module",
      tostring(name), type(m)), 0)
  end
  name = tostring(name)
  if self._children[name] == nil then table.insert(self._child_names, name) end
  self._children[name] = m
  rawset(self, name, m)
  return m
end

function Module:children()
  local out = {}
  for _, n in ipairs(self._child_names) do out[#out + 1] = self._children[n] end
  return out
end

-- Visit (prefix, module) depth-first in registration order.
function Module:modules(prefix, out)
  out = out or {}
  prefix = prefix or ""
  nn.sync_registered(self)
  out[#out + 1] = { prefix, self }
  for _, n in ipairs(self._child_names) do
    self._children[n]:modules(prefix == "" and n or (prefix .. "." .. n), out)
  end
  return out
end

function Module:named_parameters()
  local out, seen = {}, {}
  for _, pm in ipairs(self:modules()) do
    local prefix, m = pm[1], pm[2]
    for _, n in ipairs(m._param_names) do
      local t = m._params[n]
      if not seen[t] then
        seen[t] = true
        out[#out + 1] = { prefix == "" and n or (prefix .. "." .. n), t }
      end
    end
  end
  return out
end

function Module:parameters()
  local out = {}
  for _, np in ipairs(self:named_parameters()) do out[#out + 1] = np[2] end
  return out
end

function Module:num_parameters()
  local n = 0
  for _, p in ipairs(self:parameters()) do n = n + p:numel() end
  return n
end

function Module:state_dict()
  local sd = {}
  for _, pm in ipairs(self:modules()) do
    local prefix, m = pm[1], pm[2]
    local function key(n) return prefix == "" and n or (prefix .. "." .. n) end
    for _, n in ipairs(m._param_names) do sd[key(n)] = m._params[n] end
    for _, n in ipairs(m._buffer_names) do sd[key(n)] = m._buffers[n] end
  end
  return sd
end

-- Copy values from sd into this module's tensors. strict (default true) raises on
-- missing, unexpected or mis-shaped keys, listing all of them. Returns
-- missing, unexpected (lists of names) when not strict.
-- A model's state dict `own` against a loaded one `sd`: { missing =, unexpected =, misshaped = },
-- each a sorted list (misshaped entries "name: checkpoint (a,b), model (c,d)" or "name: not a
-- tensor"). Module:load_state_dict, checkpoint.load_vit and s2s.load_model all compare so.
local function shape_text(t) return "(" .. table.concat(t:shape(), ",") .. ")" end
function nn.compare_state_dict(own, sd)
  local r = { missing = {}, unexpected = {}, misshaped = {} }
  for k, t in pairs(own) do
    local v = sd[k]
    if v == nil then r.missing[#r.missing + 1] = k
    elseif not al.is_tensor(v) then r.misshaped[#r.misshaped + 1] = k .. ": not a tensor"
    elseif shape_text(v) ~= shape_text(t) then
      r.misshaped[#r.misshaped + 1] = ("%s: checkpoint %s, model %s"):format(k, shape_text(v), shape_text(t))
    end
  end
  for k in pairs(sd) do if own[k] == nil then r.unexpected[#r.unexpected + 1] = tostring(k) end end
  table.sort(r.missing); table.sort(r.unexpected); table.sort(r.misshaped)
  return r
end

-- compare_state_dict's lists as one short line: "missing keys (2): a, b; unexpected keys (40):
-- c, d, ... and 35 more; mis-shaped (1): ..." (the lists that are not empty).
function nn.state_dict_mismatch_text(r)
  local parts = {}
  local function add(what, list, sep)
    if #list > 0 then parts[#parts + 1] = ("%s (%d): %s"):format(what, #list, util.key_list(list, sep)) end
  end
  add("missing keys", r.missing, ", ")
  add("unexpected keys", r.unexpected, ", ")
  add("mis-shaped", r.misshaped, "; ")
  return table.concat(parts, "; ")
end

function Module:load_state_dict(sd, opts)
  -- checked here: otherwise a wrong argument fails below as "attempt to index a number value"
  if type(sd) ~= "table" then
    error(("load_state_dict: the state dict must be a table {name = tensor, ...}, got %s"):format(
      al.is_tensor(sd) and "a tensor" or type(sd)), 2)
  end
  if opts ~= nil and type(opts) ~= "table" then
    error(("load_state_dict: options must be a table {strict = ...}, got %s%s"):format(type(opts),
      type(opts) == "boolean" and (" (PyTorch's strict=%s is {strict = %s})"):format(opts, opts) or ""), 2)
  end
  -- {strcit = false} ran strict and failed on missing keys without naming the typo, and
  -- {strict = "no"} was taken as strict
  if opts then
    local bad = util.unknown_keys(opts, { "strict" })
    if bad then error("load_state_dict: " .. bad, 2) end
    if opts.strict ~= nil and type(opts.strict) ~= "boolean" then
      error(("load_state_dict: strict must be true or false, got %s"):format(util.show(opts.strict)), 2)
    end
  end
  local strict = not (opts and opts.strict == false)
  local own = self:state_dict()
  local r = nn.compare_state_dict(own, sd)
  local missing, unexpected, misshaped = r.missing, r.unexpected, r.misshaped
  if #misshaped > 0 or (strict and (#missing > 0 or #unexpected > 0)) then
    local parts = {}
    -- (capped: a state dict of another model listed thousands of keys in one message)
    if #missing > 0 then parts[#parts + 1] = "missing keys: " .. util.key_list(missing) end
    if #unexpected > 0 then parts[#parts + 1] = "unexpected keys: " .. util.key_list(unexpected) end
    if #misshaped > 0 then parts[#parts + 1] = "mis-shaped: " .. util.key_list(misshaped, "; ") end
    error("load_state_dict: " .. table.concat(parts, "; "), 2)
  end
  al.no_grad(function()
    for k, t in pairs(own) do
      local v = sd[k]
      if v ~= nil then
        if v:dtype() ~= t:dtype() then v = (t:dtype() == "int64") and v:long() or v:float() end
        t:copy_(v)
      end
    end
  end)
  return missing, unexpected
end

-- Whether v is a module instance: an object of nn.Module or of a class derived from it (the
-- tree, state_dict and parameters walks need Module's fields, so a table with a forward
-- function is not enough).
function nn.is_module(v) return nn.is_instance(v, Module) end

-- Whether v is an object of `class` or of a class derived from it (nn.class's parent chain).
function nn.is_instance(v, class)
  if type(v) ~= "table" then return false end
  local c = getmetatable(v)
  while type(c) == "table" do
    if c == class then return true end
    c = rawget(c, "parent")
  end
  return false
end

function Module:train(on)
  if on == nil then on = true end
  if type(on) ~= "boolean" then   -- train("no") set training to "no", which reads as true
    error(("%s:train: expects true or false, got %s"):format(self.__name or "Module", type(on)), 2)
  end
  for _, pm in ipairs(self:modules()) do pm[2].training = on end
  return self
end

function Module:eval() return self:train(false) end

function Module:zero_grad(...)
  -- PyTorch's zero_grad(set_to_none=False) zeroes instead; an argument here would be ignored
  if select("#", ...) > 0 then util.no_argument((self.__name or "Module") .. ":zero_grad", "zero_grad", type((...)), 2) end
  for _, p in ipairs(self:parameters()) do p.grad = nil end
end

-- Freeze (false) or unfreeze (true, the default) every parameter, as PyTorch's
-- Module.requires_grad_: a frozen parameter gets no gradient, so the optimizers skip it.
function Module:requires_grad_(on)
  if on == nil then on = true end
  if type(on) ~= "boolean" then
    error(("%s:requires_grad_: expects true or false, got %s"):format(self.__name or "Module", nn.show(on)), 2)
  end
  for _, p in ipairs(self:parameters()) do
    p:requires_grad_(on)
    if not on then p.grad = nil end
  end
  return self
end

function Module:apply(fn)
  if type(fn) ~= "function" then error(("%s:apply: expects a function, got %s"):format(self.__name or "Module", type(fn)), 2) end
  for _, pm in ipairs(self:modules()) do fn(pm[2], pm[1]) end
  return self
end

-- How an error message names child `name` (module m) of this module: "layer attn (BiLSTM)".
-- Containers whose children are numbered override it: their children's names are 0-based
-- (PyTorch's and timm's state-dict names: blocks.0, blocks.1, Sequential's 0, 1, ...), while
-- the API counts from 1 (model:block(i), seq:get(i)), so a message gives both -- "block 2
-- (blocks.1, EncoderBlock)" -- and a 1-based user is never pointed at the wrong one.
function Module:child_label(name, m)
  return ("layer %s (%s)"):format(tostring(name), m.__name or "?")
end

-- The folder of the library's Lua modules ("/.../attnlab/"), from this file's own path.
local LIBRARY_DIR = debug.getinfo(1, "S").source:match("^@(.*/)nn/[^/]*$")

-- Call a child, prefixing any error with the layer that failed:
-- "in layer attn (BiLSTM): <message>", "in block 2 (blocks.1, EncoderBlock): <message>".
-- A position inside the library itself ("/.../attnlab/nn/init.lua:362: attnlab.linear: ...",
-- added when a library module's forward called the C core) is dropped: the layer path says
-- where. A position in the user's own code (a mixer of their own) is kept: the rethrow loses
-- the traceback, so it is what points them at the line.
function Module:call_child(name, ...)
  name = tostring(name)
  if rawget(self, name) ~= self._children[name] then nn.sync_registered(self) end
  local m = self._children[name] or error("no child " .. name)
  local r = table.pack(pcall(m.forward, m, ...))
  if not r[1] then
    local msg = r[2]
    if type(msg) == "string" then
      if LIBRARY_DIR and msg:sub(1, #LIBRARY_DIR) == LIBRARY_DIR then
        msg = msg:gsub("^[^:]*%.lua:%d+: ", "", 1)
      end
      error(("in %s: %s"):format(self:child_label(name, m), msg), 0)
    end
    error(msg, 0)
  end
  return table.unpack(r, 2, r.n)
end

function Module:extra_repr() return "" end

function Module:tree(indent)
  indent = indent or ""
  local own = 0
  for _, n in ipairs(self._param_names) do own = own + self._params[n]:numel() end
  local total = self:num_parameters()
  local head = ("%s(%s)"):format(self.__name or "Module", self:extra_repr())
  if #self._child_names == 0 then
    return total > 0 and ("%s  [%s params]"):format(head, nn.format_count(total)) or head
  end
  local lines = { ("%s  [%s params]"):format(head, nn.format_count(total)) }
  for _, n in ipairs(self._child_names) do
    lines[#lines + 1] = indent .. "  (" .. n .. "): " .. self._children[n]:tree(indent .. "  ")
  end
  return table.concat(lines, "\n")
end

-- A module's options table checked against the keys it reads: nil or a table, and no other
-- key -- a misspelt option (normaliser = "sparsemax") would otherwise be ignored and the model
-- built with the default, a silently different experiment. Returns opts (or {}).
function nn.check_opts(who, opts, known)
  if opts == nil then return {} end
  if type(opts) ~= "table" then
    error(("%s: options must be a table {key = value, ...}, got %s"):format(who, type(opts)), 0)
  end
  local bad = util.unknown_keys(opts, known)
  if bad then error(("%s: %s"):format(who, bad), 0) end
  return opts
end
local function keyset(list) local t = {} for _, k in ipairs(list) do t[k] = true end return t end
nn.keyset = keyset

-- Value checks for module options, each raising one line "<who>: <key> must be ..., got <v>"
-- when the module is built: a bad size would otherwise fail later inside an op (or in C) with
-- a message that does not name the option, or build a different model silently.
local function show(v) return al.cli.show(v) end
nn.show = show

-- v must be an integer >= lo (lo defaults to 1: a positive size); returns v.
function nn.check_int(who, key, v, lo)
  lo = lo or 1
  if math.type(v) ~= "integer" or v < lo then
    error(("%s: %s must be %s, got %s"):format(who, key, lo == 1 and "a positive integer" or ("an integer >= %d"):format(lo),
      show(v)), 0)
  end
  return v
end

-- v must be a finite number > 0 (open_lo) or >= 0; returns v.
function nn.check_number(who, key, v, open_lo)
  if type(v) ~= "number" or v ~= v or v == math.huge or (open_lo and not (v > 0)) or (not open_lo and v < 0) then
    error(("%s: %s must be a finite number %s 0, got %s"):format(who, key, open_lo and ">" or ">=", show(v)), 0)
  end
  return v
end

-- v must be nil or a boolean; returns v.
function nn.check_bool(who, key, v)
  if v ~= nil and type(v) ~= "boolean" then
    error(("%s: %s must be true or false, got %s"):format(who, key, show(v)), 0)
  end
  return v
end

function nn.format_count(n)
  local s = tostring(math.floor(n))
  return (s:reverse():gsub("(%d%d%d)", "%1,"):reverse():gsub("^,", ""))
end

-- ---- initialisers (timm's ViT defaults) -------------------------------------------
nn.init = {}

-- Truncated normal N(mean, std) restricted to [a, b] (absolute bounds, as timm's
-- trunc_normal_): out-of-range draws are redrawn.
function nn.init.trunc_normal_(t, std, mean, a, b, gen)
  std, mean = std or 1, mean or 0
  a, b = a or -2, b or 2
  -- Redrawing never ends when [a, b] holds (almost) none of N(mean, std): b < a, std 0 with the
  -- mean outside, or bounds far in a tail (a = 5, b = 6 with std 1: 3e-7 of the draws) hung.
  for _, kv in ipairs({ { "std", std }, { "mean", mean }, { "a", a }, { "b", b } }) do
    if type(kv[2]) ~= "number" or kv[2] ~= kv[2] then
      error(("trunc_normal_: %s must be a number, got %s"):format(kv[1], show(kv[2])), 2)
    end
  end
  if not (std >= 0 and std < math.huge and mean > -math.huge and mean < math.huge) then
    error(("trunc_normal_: needs a finite mean and a finite std >= 0, got mean %s, std %s"):format(show(mean), show(std)), 2)
  end
  local p   -- the share of draws that fall in [a, b]
  if std == 0 then p = (mean >= a and mean <= b) and 1 or 0
  elseif not (a <= b) then p = 0
  else
    local z = al.erf(al.tensor({ (a - mean) / (std * math.sqrt(2)), (b - mean) / (std * math.sqrt(2)) })):totable()
    p = 0.5 * (z[2] - z[1])
  end
  if p < 1e-6 then
    error(("trunc_normal_: [a, b] = [%s, %s] holds %s of N(%s, %s^2), so redrawing the values outside it would not end")
      :format(show(a), show(b), p == 0 and "none" or ("%.2g"):format(p), show(mean), show(std)), 2)
  end
  al.no_grad(function()
    local n = t:numel()
    local vals = {}
    local filled = 0
    while filled < n do
      local need = n - filled
      local draw = al.randn({ need }, { generator = gen }):totable()
      for i = 1, need do
        local v = mean + std * draw[i]
        if v >= a and v <= b then filled = filled + 1; vals[filled] = v end
      end
    end
    t:copy_(al.tensor(vals):reshape(t:shape()))
  end)
  return t
end

function nn.init.normal_(t, mean, std, gen) return t:normal_(mean or 0, std or 1, gen) end
function nn.init.uniform_(t, a, b, gen) return t:uniform_(a or 0, b or 1, gen) end
function nn.init.zeros_(t) return t:zero_() end
function nn.init.ones_(t) return t:fill_(1) end
function nn.init.constant_(t, v) return t:fill_(v) end

-- fan_in, fan_out of a weight (out, in, ...).
function nn.init.fans(t)
  local s = t:shape()
  local recept = 1
  for i = 3, #s do recept = recept * s[i] end
  return (s[2] or 1) * recept, s[1] * recept
end

function nn.init.xavier_uniform_(t, gain, gen)
  local fi, fo = nn.init.fans(t)
  local a = (gain or 1) * math.sqrt(6 / (fi + fo))
  return t:uniform_(-a, a, gen)
end

function nn.init.xavier_normal_(t, gain, gen)
  local fi, fo = nn.init.fans(t)
  return t:normal_(0, (gain or 1) * math.sqrt(2 / (fi + fo)), gen)
end

-- PyTorch's nn.Linear default: kaiming_uniform(a=sqrt(5)) = U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
function nn.init.linear_default_(w, b, gen)
  local fi = nn.init.fans(w)
  local bound = 1 / math.sqrt(fi)
  w:uniform_(-bound, bound, gen)
  if b then b:uniform_(-bound, bound, gen) end
end

-- ---- layers -----------------------------------------------------------------------
local Linear = nn.class("Linear", Module)
nn.Linear = Linear
local LINEAR_OPTS = keyset({ "bias", "generator" })

-- A leaf layer's input, checked at forward: a tensor (else "bad argument #1 to 'linear'"), and for
-- check_last_dim one whose last dim is the layer's width (LayerNorm without weights normalized
-- any width, silently; Linear's op names the weight's shape itself).
-- Called on every forward: nothing is formatted unless a check fails.
local TENSOR_MT = debug.getregistry()["attnlab.Tensor"]
local function check_tensor(who, x, d)
  if getmetatable(x) ~= TENSOR_MT then
    local want = d and ("a float32 tensor (..., %d)"):format(d) or "a float32 tensor"
    error(("%s: forward(x) expects x, %s, got %s"):format(who, want, show(x)), 0)
  end
end
local function check_last_dim(who, x, d)
  check_tensor(who, x, d)
  local s = x:shape()
  if s[#s] ~= d then
    error(("%s: expected x (..., %d), got %s (%s)"):format(who, d, x:dtype(), table.concat(s, ",")), 0)
  end
end
-- fn(...) for a layer's forward: an error of the C op (a shape or dtype it refuses) without this
-- file's position ("nn/init.lua:372: attnlab.linear: ..."), which luaL_error adds and which points
-- at the library, not at the caller's mistake.
local function op_call(fn, ...)
  local ok, r = pcall(fn, ...)
  if not ok then error(r, 0) end
  return r
end
function Linear:init(i, o, opts)
  opts = nn.check_opts("Linear", opts, LINEAR_OPTS)
  if math.type(i) ~= "integer" or i < 1 or math.type(o) ~= "integer" or o < 1 then
    error(("Linear(in, out): sizes must be positive integers, got in = %s, out = %s"):format(show(i), show(o)), 0)
  end
  nn.check_bool("Linear", "bias", opts.bias)
  self.in_features, self.out_features = i, o
  local ok, w = pcall(al.empty, { o, i })   -- Linear(2^40, 2^40): the size overflows, or no memory
  if not ok then error(("Linear(%d, %d): cannot make the weight (%d,%d): %s"):format(i, o, o, i, w), 0) end
  self:param("weight", w)
  if opts.bias ~= false then self:param("bias", al.zeros({ o })) end
  nn.init.linear_default_(self.weight, self.bias, opts.generator)
end
function Linear:forward(x)
  check_tensor("Linear", x, self.in_features)
  return op_call(al.linear, x, self.weight, self.bias)
end
function Linear:extra_repr()
  return ("%d -> %d%s"):format(self.in_features, self.out_features, self.bias and "" or ", no bias")
end

local LayerNorm = nn.class("LayerNorm", Module)
nn.LayerNorm = LayerNorm
local LAYERNORM_OPTS = keyset({ "eps", "affine" })
function LayerNorm:init(d, opts)
  opts = nn.check_opts("LayerNorm", opts, LAYERNORM_OPTS)
  nn.check_int("LayerNorm", "dim", d)
  if opts.eps ~= nil then nn.check_number("LayerNorm", "eps", opts.eps, true) end
  nn.check_bool("LayerNorm", "affine", opts.affine)
  self.dim, self.eps = d, opts.eps or 1e-5
  if opts.affine ~= false then
    self:param("weight", al.ones({ d }))
    self:param("bias", al.zeros({ d }))
  end
end
function LayerNorm:forward(x)
  check_last_dim("LayerNorm", x, self.dim)
  return op_call(al.layer_norm, x, self.weight, self.bias, self.eps)
end
function LayerNorm:extra_repr() return ("%d, eps=%g"):format(self.dim, self.eps) end

local Embedding = nn.class("Embedding", Module)
nn.Embedding = Embedding
local EMBEDDING_OPTS = keyset({ "generator" })
function Embedding:init(n, d, opts)
  opts = nn.check_opts("Embedding", opts, EMBEDDING_OPTS)
  nn.check_int("Embedding", "num_embeddings", n)
  nn.check_int("Embedding", "dim", d)
  self.num, self.dim = n, d
  self:param("weight", al.randn({ n, d }, { generator = opts.generator }))
end
function Embedding:forward(ids)
  if not al.is_tensor(ids) then
    error(("Embedding: forward(ids) expects ids, an int64 tensor of 1-based ids in 1..%d, got %s"):format(self.num, show(ids)), 0)
  end
  return op_call(al.embedding, self.weight, ids)   -- an id out of 1..num is named by the op
end
function Embedding:extra_repr() return ("%d, %d"):format(self.num, self.dim) end

local Dropout = nn.class("Dropout", Module)
nn.Dropout = Dropout
local DROPOUT_OPTS = keyset({ "generator" })
function Dropout:init(p, opts)
  opts = nn.check_opts("Dropout", opts, DROPOUT_OPTS)   -- {generater = g} was ignored
  p = p or 0.5
  if type(p) ~= "number" or not (p >= 0 and p < 1) then
    error(("Dropout: p must be a number in [0, 1), got %s"):format(show(p)), 0)
  end
  self.p = p
  self.generator = opts.generator
end
function Dropout:forward(x)
  check_tensor("Dropout", x)
  if not self.training or self.p == 0 then return x end
  return op_call(al.dropout, x, self.p, true, self.generator)
end
function Dropout:extra_repr() return ("p=%g"):format(self.p) end

-- The activations take no options: nn.GELU{approximate = "tanh"} (PyTorch's tanh GELU) ran the
-- exact erf GELU, silently, and nn.ReLU{inplace = true} ignored its option too. Identity takes
-- anything, as PyTorch's (argument-insensitive by design).
local function activation(name, fn)
  local cls = nn.class(name, Module)
  cls.forward = function(_, x) return fn(x) end
  if name ~= "Identity" then
    cls.init = function(_, ...)
      local n = select("#", ...)
      if n == 0 then return end
      local first = ...
      local extra = name == "GELU" and type(first) == "table" and first.approximate ~= nil
        and " (al.gelu is the exact erf GELU, PyTorch's approximate = 'none'; there is no tanh approximation)" or ""
      error(("%s() takes no options, got %s%s"):format(name, show(first), extra), 3)
    end
  end
  nn[name] = cls
  return cls
end
activation("GELU", al.gelu)
activation("ReLU", al.relu)
activation("SiLU", al.silu)
activation("Tanh", al.tanh)
activation("Sigmoid", al.sigmoid)
activation("Identity", function(x) return x end)

nn.activations = { gelu = nn.GELU, relu = nn.ReLU, silu = nn.SiLU, tanh = nn.Tanh, sigmoid = nn.Sigmoid,
                   identity = nn.Identity }

-- Sequential(m1, m2, ...): children are named "0", "1", ... as in PyTorch, so state
-- dicts match; seq[i] and seq:get(i) (1-based) return the i-th module, #seq counts them.
local Sequential = nn.class("Sequential", Module)
nn.Sequential = Sequential
Sequential.__index = function(seq, k)
  if math.type(k) == "integer" then return seq._children[tostring(k - 1)] end
  return Sequential[k]
end
Sequential.__len = function(seq) return #seq._child_names end
function Sequential:init(...)
  local ms = { ... }
  if #ms == 1 and getmetatable(ms[1]) == nil and type(ms[1]) == "table" then ms = ms[1] end
  for i, m in ipairs(ms) do   -- named by its 1-based position, as seq:get(i) counts
    if not nn.is_module(m) then error(("Sequential: layer %d must be a module (an nn.Module instance), got %s"):format(i, type(m)), 0) end
    self:add(tostring(i - 1), m)
  end
end
function Sequential:append(m) return self:add(tostring(#self._child_names), m) end
function Sequential:get(i) return self._children[tostring(i - 1)] end
-- an error names the layer by its 1-based position (seq:get(i)) and its 0-based name:
-- "in layer 2 (named "1", Linear): ..."
function Sequential:child_label(name, m)
  local i = math.tointeger(tonumber(name))
  if not i then return Module.child_label(self, name, m) end
  return ('layer %d (named "%s", %s)'):format(i + 1, name, m.__name or "?")
end
function Sequential:forward(x)
  for _, n in ipairs(self._child_names) do x = self:call_child(n, x) end
  return x
end

-- MLP: fc1 -> act -> drop -> fc2 -> drop (timm's Mlp names).
local MLP = nn.class("MLP", Module)
nn.MLP = MLP
local MLP_OPTS = keyset({ "in_features", "dim", "hidden_features", "hidden", "out_features", "act", "drop" })
function MLP:init(opts)
  opts = nn.check_opts("MLP", opts, MLP_OPTS)
  local i = opts.in_features or opts.dim
  if i == nil then error("MLP: in_features (or dim) is required", 0) end
  nn.check_int("MLP", opts.in_features ~= nil and "in_features" or "dim", i)
  local h = opts.hidden_features or opts.hidden or i * 4
  nn.check_int("MLP", opts.hidden_features ~= nil and "hidden_features" or opts.hidden ~= nil and "hidden" or "hidden size", h)
  local o = opts.out_features or i
  nn.check_int("MLP", "out_features", o)
  local act = opts.act or "gelu"
  if not nn.activations[act] then
    local names = {}
    for k in pairs(nn.activations) do names[#names + 1] = k end
    table.sort(names)
    error(("MLP: unknown activation %s; known: %s"):format(type(act) == "string" and ("'" .. act .. "'") or show(act),
      table.concat(names, ", ")), 0)
  end
  local drop = opts.drop or 0
  if type(drop) ~= "number" or not (drop >= 0 and drop < 1) then
    error(("MLP: drop must be a number in [0, 1), got %s"):format(show(drop)), 0)
  end
  self:add("fc1", nn.Linear(i, h))
  self:add("act", nn.activations[act]())
  self:add("fc2", nn.Linear(h, o))
  self.drop = drop
  if self.drop > 0 then self:add("dropout", nn.Dropout(self.drop)) end
end
function MLP:forward(x)
  x = self.act(self.fc1(x))
  if self.dropout then x = self.dropout(x) end
  x = self.fc2(x)
  if self.dropout then x = self.dropout(x) end
  return x
end

-- Further modules (attention, encoder blocks, ViT, mixers) live in their own files.
local extra = { MultiHeadAttention = "attnlab.nn.attention", EncoderBlock = "attnlab.nn.attention",
                Normalizer = "attnlab.nn.attention", ViT = "attnlab.nn.vit", BiLSTM = "attnlab.nn.mixers",
                BiMamba = "attnlab.nn.mixers" }
setmetatable(nn, { __index = function(t, k)
  local mod = extra[k]
  if mod then
    require(mod)
    return rawget(t, k)
  end
end })

return nn
