-- attnlab: tensors with autograd, attention normalizers and sequential mixers.
--
--   local al = require "attnlab"
--   local x = al.randn({2, 3}, {requires_grad = true})
--   local y = al.entmax15(x):sum(); y:backward(); print(x.grad)
--
-- This file joins the C core (attnlab.core) with the Lua half (nn, optim, data,
-- stats, ...), which is loaded on first use: al.nn, al.optim, al.data, al.stats.
local core = require "attnlab.core"

local al = {}
for k, v in pairs(core) do al[k] = v end
package.loaded["attnlab"] = al

al.float32, al.int64 = "float32", "int64"

-- The checkout this module was loaded from (the folder holding lua/, scripts/, ...), or nil
-- when it was loaded from an installed tree.
function al.checkout()
  local p = package.searchpath("attnlab", package.path) or ""
  return p:match("^(.*)/lua/attnlab/init%.lua$") or (p:match("^lua/attnlab/init%.lua$") and ".") or nil
end

-- Where scripts/ and experiments/ are: the checkout; in an installed tree
-- (<prefix>/share/lua/5.4/attnlab/init.lua) <prefix>/share/attnlab when make install put
-- them there; else ".".
function al.root()
  local c = al.checkout()
  if c then return c end
  local p = package.searchpath("attnlab", package.path) or ""
  local share = p:match("^(.*)/lua/5%.%d+/attnlab/init%.lua$")
  if share then
    local f = io.open(share .. "/attnlab/scripts/train.lua", "r")
    if f then f:close() return share .. "/attnlab" end
  end
  return "."
end

-- The PyTorch halves of the parity check and of the speed benchmarks: Python programs that
-- ship with the library (lua/attnlab/torch/, installed beside the modules), found the way
-- modules are, so the library needs nothing of scripts/.
function al.torch_program(name)
  local dir = (package.searchpath("attnlab", package.path) or ""):match("^(.*)/init%.lua$")
  if not dir then error("attnlab: cannot locate the attnlab package on package.path", 2) end
  return dir .. "/torch/" .. name
end

-- fn of al.no_grad / al.enable_grad: a function (or a callable), checked before recording is
-- switched ("attempt to call a number value" came from inside the pcall).
local function check_callable(who, fn)
  local mt = getmetatable(fn)
  if type(fn) ~= "function" and not (type(mt) == "table" and mt.__call) then
    error(("attnlab.%s: expects a function to run, got %s"):format(who, type(fn)), 3)
  end
end

-- Run fn with autograd recording off (evaluation, optimizer updates).
function al.no_grad(fn, ...)
  check_callable("no_grad", fn)
  local prev = core.set_grad_enabled(false)
  local r = table.pack(pcall(fn, ...))
  core.set_grad_enabled(prev)
  if not r[1] then error(r[2], 0) end
  return table.unpack(r, 2, r.n)
end

function al.enable_grad(fn, ...)
  check_callable("enable_grad", fn)
  local prev = core.set_grad_enabled(true)
  local r = table.pack(pcall(fn, ...))
  core.set_grad_enabled(prev)
  if not r[1] then error(r[2], 0) end
  return table.unpack(r, 2, r.n)
end

-- t of the *_like functions: a tensor ("init.lua:76: attempt to index a number value" otherwise),
-- and opts a table (al.zeros ignored a number there).
local function check_like(who, t, opts)
  if not al.is_tensor(t) then error(("attnlab.%s: expects a tensor, got %s"):format(who, type(t)), 3) end
  if opts ~= nil and type(opts) ~= "table" then
    error(("attnlab.%s: options must be a table {dtype =, requires_grad =}, got %s"):format(who, type(opts)), 3)
  end
end
-- f(...) for a *_like function `who` built on al.<base>: f's error (a bad dtype, 1.5 into an
-- int64 tensor) is raised as who's, from who's caller. Called from this file the binding's
-- errors carried this file's position ("init.lua:94:"); called through pcall they carry none.
-- Level 3 is who's caller: who must not tail-call like_call (its frame would be gone).
local function like_call(who, base, f, ...)
  local ok, r = pcall(f, ...)
  if ok then return r end
  if type(r) ~= "string" then error(r, 0) end
  error((r:gsub("^attnlab%." .. base .. ":", "attnlab." .. who .. ":")), 3)
end
-- opts of a *_like function: t's dtype unless opts names one (as PyTorch's zeros_like). Any
-- options table without a dtype -- {requires_grad = false}, {} -- made an int64 t's copy float32.
local function like_opts(t, opts)
  local o = { dtype = t:dtype() }
  for k, v in pairs(opts or {}) do o[k] = v end
  return o
end
function al.zeros_like(t, opts)
  check_like("zeros_like", t, opts)
  local r = like_call("zeros_like", "zeros", al.zeros, t:shape(), like_opts(t, opts))
  return r
end
function al.ones_like(t, opts)
  check_like("ones_like", t, opts)
  local r = like_call("ones_like", "ones", al.ones, t:shape(), like_opts(t, opts))
  return r
end
function al.randn_like(t, opts)   -- (randn refuses an explicit nil where its options go)
  check_like("randn_like", t, opts)
  if opts == nil then return al.randn(t:shape()) end
  local r = like_call("randn_like", "randn", al.randn, t:shape(), opts)
  return r
end
function al.full_like(t, v)
  check_like("full_like", t)
  if type(v) ~= "number" then error(("attnlab.full_like: the fill value must be a number, got %s"):format(type(v)), 2) end
  local r = like_call("full_like", "full", al.full, t:shape(), v, { dtype = t:dtype() })
  return r
end
function al.is_tensor(v) return getmetatable(v) == debug.getregistry()["attnlab.Tensor"] end

-- tostring(t) pretty-prints through attnlab.format (loaded on first use). The binding
-- requires nothing of this library, so the formatter is installed here, in the registry key
-- the binding's __tostring reads (lua/bind/bind.h, TENSOR_FORMATTER).
debug.getregistry()["attnlab.Tensor.formatter"] = function(t) return require("attnlab.format")(t) end

-- std over a dim (or all), from var.
-- var's errors (a dim of one element, a misspelt option) are raised as std's, from the caller's
-- line: called from here they carried this file's position.
function al.std(t, dim, keepdim, opts)
  local ok, v = pcall(al.var, t, dim, keepdim, opts)
  if not ok then error((tostring(v):gsub("^attnlab%.var", "attnlab.std"):gsub(" to '[%w%.%?]*'", " to 'std'")), 2) end
  -- where the variance is 0 (a constant row) sqrt's derivative is inf, and inf * 0 made the
  -- gradient NaN; PyTorch's std gives 0 there. The same values (NaN stays NaN): sqrt of v, and
  -- 0 where v is 0, reached through a branch without sqrt.
  local zero = al.eq(v, 0)
  return al.where(zero, 0, al.sqrt(al.where(zero, 1, v)))
end
al.Tensor.std = al.std

-- Numerically check d(sum(w * fn(inputs...)))/d(input) against central differences.
-- inputs: list of tensors (float32; those with requires_grad are checked).
-- opts: eps (1e-3), atol (1e-3), rtol (1e-2), seed. Returns true, or false and a report.
-- float32 finite differences are noisy; the defaults reject a wrong gradient (errors of
-- 10% and more) while tolerating rounding. The loss is accumulated in double in Lua.
local GRADCHECK_OPTS = { eps = true, atol = true, rtol = true, seed = true }
function al.gradcheck(fn, inputs, opts)
  -- the arguments, checked first: a misspelt option (esp) or eps = 0 ran a check that passes
  -- whatever the gradient, and the other mistakes failed inside this function
  local function bad(msg) error("attnlab.gradcheck: " .. msg, 3) end
  if type(fn) ~= "function" and not (type(getmetatable(fn)) == "table" and getmetatable(fn).__call) then
    bad(("fn must be a function, got %s"):format(type(fn)))
  end
  if type(inputs) ~= "table" or al.is_tensor(inputs) then
    bad(("inputs must be a list of tensors {x, ...}, got %s"):format(al.is_tensor(inputs) and "a tensor" or type(inputs)))
  end
  local checked = 0
  for i, x in ipairs(inputs) do
    if al.is_tensor(x) and x.requires_grad then checked = checked + 1 end
  end
  if checked == 0 then bad("no input has requires_grad = true: there is no gradient to check") end
  -- an expanded input's elements share memory: one perturbation moves several of them (torch's
  -- gradcheck refuses it too)
  for i, x in ipairs(inputs) do
    if al.is_tensor(x) and x.requires_grad then
      local shape, stride = x:shape(), x:stride()
      for d = 1, #shape do
        if stride[d] == 0 and shape[d] > 1 then
          bad(("input %d is an expanded view (its elements share memory): pass x:contiguous()"):format(i))
        end
      end
    end
  end
  if opts ~= nil and type(opts) ~= "table" then bad(("opts must be a table {eps =, atol =, rtol =, seed =}, got %s"):format(type(opts))) end
  opts = opts or {}
  for k in pairs(opts) do
    if not GRADCHECK_OPTS[k] then bad(("unknown option '%s' (known: atol, eps, rtol, seed)"):format(tostring(k))) end
  end
  for _, k in ipairs({ "eps", "atol", "rtol" }) do
    local v = opts[k]
    if v ~= nil and not (type(v) == "number" and v >= 0 and v < math.huge and (k ~= "eps" or v > 0)) then
      bad(("%s must be a finite number %s, got %s"):format(k, k == "eps" and "> 0" or ">= 0", v ~= v and "nan" or tostring(v)))
    end
  end
  local eps, atol, rtol = opts.eps or 1e-3, opts.atol or 1e-3, opts.rtol or 1e-2
  local gen = al.Generator(opts.seed or 7)
  local out = fn(table.unpack(inputs))
  local outs = al.is_tensor(out) and { out } or out
  if type(outs) ~= "table" or #outs == 0 then
    bad(("fn must return a tensor or a list of tensors, got %s"):format(type(out)))
  end
  for i, o in ipairs(outs) do
    if not al.is_tensor(o) then bad(("fn's result %d is a %s, not a tensor"):format(i, type(o))) end
  end
  local weights = {}
  for i, o in ipairs(outs) do weights[i] = al.randn(o:shape(), { generator = gen }) end
  local function loss()
    local s = 0
    local r = fn(table.unpack(inputs))
    local rs = al.is_tensor(r) and { r } or r
    for i, o in ipairs(rs) do
      local a, w = o:contiguous():reshape({ -1 }):totable(), weights[i]:reshape({ -1 }):totable()
      for j = 1, #a do s = s + a[j] * w[j] end
    end
    return s
  end
  for _, x in ipairs(inputs) do if al.is_tensor(x) and x.requires_grad then x.grad = nil end end
  local total = nil
  for i, o in ipairs(outs) do
    local l = al.sum(o * weights[i])
    total = total and (total + l) or l
  end
  if not total.requires_grad then
    bad("fn's result does not require grad: it depends on no input that requires grad, or only through an op " ..
      "without a gradient (argmax, a comparison, an int64 result)")
  end
  total:backward()
  local report, ok = {}, true
  for k, x in ipairs(inputs) do
    if al.is_tensor(x) and x.requires_grad then
      local n = x:numel()
      local g = x.grad and x.grad:reshape({ -1 }):totable() or {}
      local worst, wi, wa, wn = 0, 0, 0, 0
      -- element j (row-major, as the gradient's order) as a 0-dim view of x itself: a reshape
      -- of a non-contiguous x (a transposed leaf) was a copy, so the perturbation never reached
      -- fn and every numeric gradient was 0
      local shape = x:shape()
      local function element(j)
        local e, r = x, j - 1
        for d = 1, #shape do
          local below = 1
          for d2 = d + 1, #shape do below = below * shape[d2] end
          e = e:select(1, r // below + 1)
          r = r % below
        end
        return e
      end
      al.no_grad(function()
        for j = 1, n do
          local e = element(j)
          local v = e:item()
          e:fill_(v + eps)
          local lp = loss()
          e:fill_(v - eps)
          local lm = loss()
          e:fill_(v)
          local num = (lp - lm) / (2 * eps)
          local ana = g[j] or 0
          local err = math.abs(num - ana) / (atol + rtol * math.abs(num))
          if err > worst then worst, wi, wa, wn = err, j, ana, num end
        end
      end)
      if worst > 1 then
        ok = false
        report[#report + 1] = ("input %d element %d: analytic %.6g, numeric %.6g"):format(k, wi, wa, wn)
      end
    end
  end
  if ok then return true end
  return false, table.concat(report, "; ")
end

-- Lazy submodules: al.nn, al.optim, al.data, al.stats, al.sweep, al.report, al.s2s ...
-- Every name here is a module attnlab.<name> (tests/lua/test_host.lua loads each): a folder
-- lua/attnlab/<name>/ (nn, data, sweep, report, s2s), a file (format, bench, parity), or a
-- one-line file naming where the module lives (train, optim, cli -> run/; stats -> report/;
-- checkpoint -> nn/).
local lazy = { nn = true, optim = true, data = true, stats = true, sweep = true, report = true,
               s2s = true, train = true, format = true, cli = true, bench = true,
               checkpoint = true, parity = true }

-- The names of the lazily loaded submodules, sorted.
function al.submodules()
  local names = {}
  for k in pairs(lazy) do names[#names + 1] = k end
  table.sort(names)
  return names
end
setmetatable(al, {
  __index = function(t, k)
    if lazy[k] then
      local m = require("attnlab." .. k)
      rawset(t, k, m)
      return m
    end
  end,
  -- the REPL's Tab completion lists these names of an __index function (bin/attnlab's
  -- helpers.c), so al.n<Tab> offers al.nn before its first use loads it
  __fields = al.submodules(),
})

-- "al.softmax al.sparsemax ...": the normalizers' line of al.help, from the table.
local function normalizer_functions()
  local names = {}
  for _, d in ipairs(core.normalizers()) do names[#names + 1] = "al." .. d.name end
  return table.concat(names, " ")
end

-- al.help() prints the overview; al.help("name") (al.help("nn.Linear")) checks the name first:
-- there is no per-function text, but a name attnlab does not have is said to be missing
-- instead of answered with the overview as if it were there.
function al.help(name)
  if type(name) == "string" then
    local v = al
    for part in (name:gsub("^al%.", "") .. "."):gmatch("([^.]*)%.") do
      v = type(v) == "table" and part ~= "" and v[part] or nil
      if v == nil then
        error(("attnlab.help: attnlab has no al.%s (al.help() lists the API)"):format(name:gsub("^al%.", "")), 2)
      end
    end
  end
  print((([[attnlab -- tensors with autograd, attention normalizers, sequential mixers.
  tensors:     al.tensor{{1,2},{3,4}}  al.zeros{2,3}  al.randn{2,3}  t:shape()  t:reshape{...}
  math:        a + b  a * b  al.matmul(a, b)  al.sum(t, dim)  al.exp(t)  (dims are 1-based)
  autograd:    al.randn({3}, {requires_grad=true}); y:backward(); x.grad; al.no_grad(fn)
  normalizers: NORMALIZERS
  modules:     al.nn.Linear(4, 2)  al.nn.ViT{...}  al.nn.MultiHeadAttention{dim=,heads=,normalizer=}
  training:    al.optim.AdamW(model:parameters(), {lr=1e-3})  opt:zero_grad() opt:step()
  mixers:      al.nn.BiMamba{dim=,heads=}  al.nn.BiLSTM{dim=,heads=}  model:block(i):set_mixer(m)
  data:        al.data.fashion_mnist{split="train"}  ds:subset{1,2,3}  al.data.Loader(ds, {batch_size=, limit=})
               al.data.from_tensors(x, y)  (your own tensors: x (N,...), int64 labels y (N) 1..C)
  save/load:   al.save(path, tensors)  al.load(path)  al.checkpoint.save_vit(path, model)  al.checkpoint.vit_from_file(path)
  checks:      al.gradcheck(fn, {x, ...})
  statistics:  al.stats.ttest_rel(a, b)  al.stats.holm(ps)  al.report (records -> Markdown)
  config:      al.config()  al.set_num_threads(n)  al.manual_seed(n)  al.mem()  al.empty_cache()]]):gsub("NORMALIZERS", normalizer_functions())))
end

-- Last, when every function of this file is defined: the core refuses a normalizer named like
-- one of its own functions; a name the Lua half defines (al.help, al.nn, ...) would replace the
-- normalizer, or be hidden by it, silently.
for _, d in ipairs(core.normalizers()) do
  if rawget(al, d.name) ~= core[d.name] or lazy[d.name] then
    error(("attnlab: the normalizer '%s' (core/norm/registry.c) has the name of al.%s; rename it"):format(d.name, d.name), 0)
  end
end

return al
