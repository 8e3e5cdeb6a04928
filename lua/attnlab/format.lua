-- lua/attnlab/format.lua -- tensor pretty-printing, the way PyTorch prints (torch/_tensor_str.py
-- with the default print options: precision 4, threshold 1000, edgeitems 3, linewidth 80).
--
--   local format = require "attnlab.format"
--   print(format(t))                 --> tensor([[ 0.1234, -1.0000],
--                                    -->         [ 2.5000,  3.0000]])
--                                    --> [float32 tensor of shape (2, 2)]
--   format(t, {footer = false, precision = 2, linewidth = 120, sci_mode = true})
--
-- Pure Lua. It touches a tensor only through t:shape(), t:dim(), t:numel(), t:dtype(),
-- t:totable(), t:narrow(dim, start, len) (1-based view) and the fields t.requires_grad and
-- t.grad_fn_name, so it works on anything that offers those. A summarised tensor
-- (numel > threshold) is read through narrow() views of its corners: printing a 1e8-element
-- tensor converts at most (2*edgeitems)^dim entries to Lua numbers.
--
-- The first line(s) match PyTorch character for character (tests/ref/format_ref.json holds
-- PyTorch's own output for the cases in tests/lua/test_format.lua); the dtype names are
-- attnlab's ("dtype=int64", not "dtype=torch.int64"). The footer line
-- "[<dtype> tensor of shape (<sizes>)]" is attnlab's addition (torch7 printed one too).

local DEFAULTS = {
  precision = 4,    -- digits after the point (fixed) or in the mantissa (scientific)
  threshold = 1000, -- summarise when numel > threshold
  edgeitems = 3,    -- entries kept at each end of a summarised dim
  linewidth = 80,   -- characters per line before wrapping a row
  sci_mode = nil,   -- nil: choose as PyTorch does; true/false: force
  footer = true,    -- append "[float32 tensor of shape (2, 2)]"
}

local floor, huge, max = math.floor, math.huge, math.max
local sfmt, rep, concat = string.format, string.rep, table.concat

-- Python's str(tuple): (), (3,), (2, 3)
local function tuple_str(shape)
  if #shape == 1 then return "(" .. tostring(shape[1]) .. ",)" end
  local parts = {}
  for i = 1, #shape do parts[i] = tostring(shape[i]) end
  return "(" .. concat(parts, ", ") .. ")"
end

local function is_finite(v) return v == v and v ~= huge and v ~= -huge end

-- Integer text as Python's "{}".format(int) gives it.
local function int_str(v)
  if type(v) == "boolean" then return v and "True" or "False" end
  if math.type(v) == "integer" then return tostring(v) end
  if not is_finite(v) then return v ~= v and "nan" or (v > 0 and "inf" or "-inf") end
  return sfmt("%.0f", v)
end

-- Collect the leaf values of a nested table of known depth.
local function flatten(tab, depth, out)
  if depth == 0 then out[#out + 1] = tab; return out end
  for i = 1, #tab do flatten(tab[i], depth - 1, out) end
  return out
end

-- The element formatter: PyTorch's _Formatter. Decides fixed / integer / scientific notation and
-- the common width from the (summarised) values; nan and inf do not take part in the choice.
local function new_formatter(values, floating, o)
  local f = { floating = floating, int_mode = true, sci = false, width = 1, prec = o.precision }
  if not floating then
    for i = 1, #values do f.width = max(f.width, #int_str(values[i])) end
    return f
  end
  local nz = {}
  for i = 1, #values do
    local v = values[i]
    if is_finite(v) and v ~= 0 then nz[#nz + 1] = v end
  end
  if #nz > 0 then
    local amin, amax = huge, 0
    for i = 1, #nz do
      local a = math.abs(nz[i])
      if a < amin then amin = a end
      if a > amax then amax = a end
      if f.int_mode and nz[i] ~= math.ceil(nz[i]) then f.int_mode = false end
    end
    local efmt = "%." .. o.precision .. "e"
    if f.int_mode then
      if amax / amin > 1000.0 or amax > 1.0e8 then
        f.sci = true
        for i = 1, #nz do f.width = max(f.width, #sfmt(efmt, nz[i])) end
      else
        -- integral floats print as "3." : one more character than the digits
        for i = 1, #nz do f.width = max(f.width, #sfmt("%.0f", nz[i]) + 1) end
      end
    elseif amax / amin > 1000.0 or amax > 1.0e8 or amin < 1.0e-4 then
      f.sci = true
      for i = 1, #nz do f.width = max(f.width, #sfmt(efmt, nz[i])) end
    else
      local ffmt = "%." .. o.precision .. "f"
      for i = 1, #nz do f.width = max(f.width, #sfmt(ffmt, nz[i])) end
    end
  end
  if o.sci_mode ~= nil then f.sci = o.sci_mode and true or false end
  return f
end

-- One element, right-aligned to the common width.
local function fmt_value(f, v)
  local s
  if not f.floating then
    s = int_str(v)
  elseif v ~= v then
    s = "nan"                 -- C prints a NaN with its sign bit as "-nan"; Python never does
  elseif v == huge then
    s = "inf"
  elseif v == -huge then
    s = "-inf"
  elseif f.sci then
    s = sfmt("%." .. f.prec .. "e", v)
  elseif f.int_mode then
    s = sfmt("%.0f", v) .. "."
  else
    s = sfmt("%." .. f.prec .. "f", v)
  end
  if #s < f.width then s = rep(" ", f.width - #s) .. s end
  return s
end

-- The values to print as a nested table. Not summarised: t:totable(). Summarised: along every dim
-- longer than 2*edge keep only the first and last `edge` entries, read block by block through
-- narrow() views (at most 2^dim blocks), so the result has size min(n, 2*edge) along each dim.
local function gather(t, shape, summarize, edge)
  local nd = #shape
  if not summarize then return t:totable() end
  local segs = {}        -- per dim: list of {start, len, offset in the gathered table}
  for d = 1, nd do
    local n = shape[d]
    if n > 2 * edge then
      segs[d] = edge > 0 and { { 1, edge, 0 }, { n - edge + 1, edge, edge } } or {}
    else
      segs[d] = { { 1, n, 0 } }
    end
  end
  local out, offs = {}, {}
  local function put(dst, src, d)
    local off = offs[d]
    for i = 1, #src do
      if d == nd then
        dst[off + i] = src[i]
      else
        local sub = dst[off + i]
        if sub == nil then sub = {}; dst[off + i] = sub end
        put(sub, src[i], d + 1)
      end
    end
  end
  local function visit(d, view)
    if d > nd then put(out, view:totable(), 1); return end
    for _, s in ipairs(segs[d]) do
      offs[d] = s[3]
      local v = view
      if s[1] ~= 1 or s[2] ~= shape[d] then v = view:narrow(d, s[1], s[2]) end
      visit(d + 1, v)
    end
  end
  visit(1, t)
  return out
end

local function vector_str(vals, n, indent, summarize, f, o)
  local per_line = max(1, floor((o.linewidth - indent) / (f.width + 2)))
  local data = {}
  if summarize and n > 2 * o.edgeitems then
    for i = 1, o.edgeitems do data[#data + 1] = fmt_value(f, vals[i]) end
    data[#data + 1] = " ..."
    for i = o.edgeitems + 1, 2 * o.edgeitems do data[#data + 1] = fmt_value(f, vals[i]) end
  else
    for i = 1, n do data[i] = fmt_value(f, vals[i]) end
  end
  local lines = {}
  for i = 1, #data, per_line do
    lines[#lines + 1] = concat(data, ", ", i, math.min(i + per_line - 1, #data))
  end
  return "[" .. concat(lines, ",\n" .. rep(" ", indent + 1)) .. "]"
end

-- tab: the gathered values of the sub-tensor at depth d (dims d..#shape of the original).
local function tensor_str(tab, shape, d, indent, summarize, f, o)
  local left = #shape - d + 1
  if left == 1 then return vector_str(tab, shape[d], indent, summarize, f, o) end
  local slices = {}
  local function sub(i) return tensor_str(tab[i], shape, d + 1, indent + 1, summarize, f, o) end
  if summarize and shape[d] > 2 * o.edgeitems then
    for i = 1, o.edgeitems do slices[#slices + 1] = sub(i) end
    slices[#slices + 1] = "..."
    for i = o.edgeitems + 1, 2 * o.edgeitems do slices[#slices + 1] = sub(i) end
  else
    for i = 1, shape[d] do slices[i] = sub(i) end
  end
  return "[" .. concat(slices, "," .. rep("\n", left - 1) .. rep(" ", indent + 1)) .. "]"
end

-- PyTorch's _add_suffixes, including its count of the last line's length (+2 when there is no
-- newline, +1 past the newline otherwise), so wrapping decisions agree exactly.
local function add_suffixes(s, suffixes, indent, linewidth)
  local parts = { s }
  local last_nl
  for p in s:gmatch("()\n") do last_nl = p end
  local last = last_nl and (#s - last_nl + 2) or (#s + 2)
  for _, suf in ipairs(suffixes) do
    if last + #suf + 2 > linewidth then
      parts[#parts + 1] = ",\n" .. rep(" ", indent) .. suf
      last = indent + #suf
    else
      parts[#parts + 1] = ", " .. suf
      last = last + #suf + 2
    end
  end
  parts[#parts + 1] = ")"
  return concat(parts)
end

local function field(t, name)
  local ok, v = pcall(function() return t[name] end)
  if ok then return v end
  return nil
end

local function is_floating(dtype)
  return dtype:find("float", 1, true) ~= nil or dtype == "half" or dtype == "double"
end

-- Whether t offers what is read of it (a tensor, or a table with its methods).
local function tensor_like(t)
  if type(t) ~= "table" and type(t) ~= "userdata" then return false end
  local ok, f = pcall(function() return t.shape end)
  return ok and type(f) == "function"
end

-- format(t [, opts]) -> string
return function(t, opts)
  if not tensor_like(t) then   -- else "format.lua:241: attempt to index a number value"
    error("attnlab.format: bad argument #1 (expected a tensor, got " .. type(t) .. ")", 2)
  end
  local o = {}
  for k, v in pairs(DEFAULTS) do o[k] = v end
  if opts ~= nil then
    if type(opts) ~= "table" then
      error("attnlab.format: bad argument #2 (expected an options table, got " .. type(opts) .. ")", 2)
    end
    for k, v in pairs(opts) do
      if DEFAULTS[k] == nil and k ~= "sci_mode" then
        error("attnlab.format: unknown option '" .. tostring(k) .. "'", 2)
      end
      o[k] = v
    end
  end
  local shape = t:shape()
  local nd = t:dim()
  local numel = t:numel()
  local dtype = t:dtype()
  local floating = is_floating(dtype)

  local prefix = "tensor("
  local indent = #prefix
  local suffixes = {}
  local body
  if numel == 0 then
    if nd ~= 1 then suffixes[#suffixes + 1] = "size=" .. tuple_str(shape) end
    if dtype ~= "float32" then suffixes[#suffixes + 1] = "dtype=" .. dtype end
    body = "[]"
  else
    -- float32 and int64 are the defaults (as float32 and int64 are in PyTorch): not shown
    if dtype ~= "float32" and dtype ~= "int64" then suffixes[#suffixes + 1] = "dtype=" .. dtype end
    local summarize = numel > o.threshold
    local data = gather(t, shape, summarize, o.edgeitems)
    if nd == 0 then
      if type(data) == "table" then data = data[1] end
      body = fmt_value(new_formatter({ data }, floating, o), data)
    else
      local f = new_formatter(flatten(data, nd, {}), floating, o)
      body = tensor_str(data, shape, 1, indent, summarize, f, o)
    end
  end
  local gfn = field(t, "grad_fn_name")
  if gfn ~= nil then
    suffixes[#suffixes + 1] = "grad_fn=<" .. tostring(gfn) .. ">"
  elseif field(t, "requires_grad") then
    suffixes[#suffixes + 1] = "requires_grad=True"
  end
  local s = add_suffixes(prefix .. body, suffixes, indent, o.linewidth)
  if o.footer then s = s .. "\n[" .. dtype .. " tensor of shape " .. tuple_str(shape) .. "]" end
  return s
end
