-- tests/lua/host_fixtures.lua -- what test_format.lua, test_host.lua and test_repl.lua share:
-- a fake tensor class for attnlab.format (also as source text, to load inside the host), a
-- small JSON decoder for tests/ref/format_ref.json, a text comparison that names the first
-- differing line, and running bin/attnlab ($ATTNLAB_HOST) as a process (harness.lua's T.run).
local T = require "harness"

local F = {}

-- Minimal JSON decoder (objects, arrays, strings, numbers, true/false/null) for the ref file.
local function json_decode(s)
  local pos = 1
  local function ws() pos = s:find("[^ \t\r\n]", pos) or #s + 1 end
  local function err(what) error(("json: %s at byte %d"):format(what, pos), 0) end
  local value
  local function str()
    local out = {}
    pos = pos + 1
    while true do
      local c = s:sub(pos, pos)
      if c == "" then err("unterminated string") end
      if c == '"' then pos = pos + 1; break end
      if c == "\\" then
        local e = s:sub(pos + 1, pos + 1)
        local map = { n = "\n", t = "\t", r = "\r", b = "\b", f = "\f", ['"'] = '"', ["\\"] = "\\", ["/"] = "/" }
        if e == "u" then
          out[#out + 1] = utf8.char(tonumber(s:sub(pos + 2, pos + 5), 16))
          pos = pos + 6
        else
          out[#out + 1] = map[e] or err("bad escape")
          pos = pos + 2
        end
      else
        local j = s:find('["\\]', pos) or #s + 1
        out[#out + 1] = s:sub(pos, j - 1)
        pos = j
      end
    end
    return table.concat(out)
  end
  function value()
    ws()
    local c = s:sub(pos, pos)
    if c == "{" then
      local t = {}
      pos = pos + 1; ws()
      if s:sub(pos, pos) == "}" then pos = pos + 1; return t end
      while true do
        ws()
        if s:sub(pos, pos) ~= '"' then err("expected key") end
        local k = str()
        ws()
        if s:sub(pos, pos) ~= ":" then err("expected ':'") end
        pos = pos + 1
        t[k] = value()
        ws()
        local d = s:sub(pos, pos)
        pos = pos + 1
        if d == "}" then return t end
        if d ~= "," then err("expected ',' or '}'") end
      end
    elseif c == "[" then
      local t = {}
      pos = pos + 1; ws()
      if s:sub(pos, pos) == "]" then pos = pos + 1; return t end
      while true do
        t[#t + 1] = value()
        ws()
        local d = s:sub(pos, pos)
        pos = pos + 1
        if d == "]" then return t end
        if d ~= "," then err("expected ',' or ']'") end
      end
    elseif c == '"' then
      return str()
    elseif s:sub(pos, pos + 3) == "true" then pos = pos + 4; return true
    elseif s:sub(pos, pos + 4) == "false" then pos = pos + 5; return false
    elseif s:sub(pos, pos + 3) == "null" then pos = pos + 4; return nil
    else
      local num = s:match("^-?%d+%.?%d*[eE]?[-+]?%d*", pos)
      if not num or num == "" then err("unexpected character") end
      pos = pos + #num
      if num:find("[.eE]") then return tonumber(num) end
      return math.tointeger(tonumber(num))
    end
  end
  local v = value()
  ws()
  if pos <= #s then err("trailing characters") end
  return v
end
F.json_decode = json_decode

------------------------------------------------------------------------------------------
-- A fake tensor: flat storage + shape/strides/offset, narrow() makes views. It offers exactly
-- the methods format.lua may use and counts the entries totable() reads. Kept as source text
-- so the piped-REPL test can load the same class inside the host.
local FAKE_SRC = [=[
local Fake = { reads = 0 }
Fake.__index = Fake
Fake.__name = "attnlab.Tensor"   -- what the REPL's printer recognises
function Fake.new(flat, shape, opts)
  opts = opts or {}
  local strides, n = {}, 1
  for d = #shape, 1, -1 do strides[d] = n; n = n * shape[d] end
  return setmetatable({ _flat = flat, _shape = shape, _strides = strides, _off = 0,
    _dtype = opts.dtype or "float32", requires_grad = opts.requires_grad or false,
    grad_fn_name = opts.grad_fn_name }, Fake)
end
function Fake:shape() local s = {} for i, v in ipairs(self._shape) do s[i] = v end return s end
function Fake:dim() return #self._shape end
function Fake:numel() local n = 1 for _, v in ipairs(self._shape) do n = n * v end return n end
function Fake:dtype() return self._dtype end
function Fake:totable()
  local shape, strides, flat = self._shape, self._strides, self._flat
  local function rec(d, off)
    if d > #shape then Fake.reads = Fake.reads + 1; return flat[off + 1] end
    local t = {}
    for i = 0, shape[d] - 1 do t[i + 1] = rec(d + 1, off + i * strides[d]) end
    return t
  end
  return rec(1, self._off)
end
function Fake:narrow(dim, start, len)
  assert(math.type(dim) == "integer" and dim >= 1 and dim <= #self._shape, "narrow: bad dim")
  assert(start >= 1 and len >= 1 and start + len - 1 <= self._shape[dim], "narrow: out of range")
  local v = setmetatable({}, Fake)
  for k, x in pairs(self) do v[k] = x end
  v._shape = self:shape()
  v._shape[dim] = len
  v._off = self._off + (start - 1) * self._strides[dim]
  return v
end
return Fake
]=]
local Fake = assert(load(FAKE_SRC, "=fake_tensor"))()

local NONFINITE = { nan = 0 / 0, inf = math.huge, ["-inf"] = -math.huge }
local function fake_from_case(c)
  local flat = {}
  for i, v in ipairs(c.data) do flat[i] = NONFINITE[v] or v end
  return Fake.new(flat, c.shape, { dtype = c.dtype, requires_grad = c.requires_grad,
                                   grad_fn_name = c.grad_fn_name })
end
F.FAKE_SRC, F.Fake, F.NONFINITE, F.fake_from_case = FAKE_SRC, Fake, NONFINITE, fake_from_case

-- Report the first differing line, so a failure is readable.
local function same_text(got, want, what)
  if got == want then return end
  local gl, wl = {}, {}
  for l in (got .. "\n"):gmatch("(.-)\n") do gl[#gl + 1] = l end
  for l in (want .. "\n"):gmatch("(.-)\n") do wl[#wl + 1] = l end
  for i = 1, math.max(#gl, #wl) do
    if gl[i] ~= wl[i] then
      error(("%s: line %d differs\n  got:  %s\n  want: %s"):format(what or "text", i,
            tostring(gl[i]), tostring(wl[i])), 0)
    end
  end
  error((what or "text") .. ": differs", 0)
end
F.same_text = same_text

-- run(cmdline, input) -> stdout, stderr, exit status of a shell command line (T.run, 60 s);
-- `input` goes to stdin (an empty file when nil, so the host never waits for a terminal).
function F.run(cmdline, input) return T.run(cmdline, { input = input or "", timeout = 60 }) end

-- host(args, input) -> stdout, stderr, exit status of `HOST args`, run as F.run runs a command.
function F.host(args, input) return T.run_host(args, { input = input or "", timeout = 60 }) end

-- has(s, sub, what) -> nothing; raises naming `what` when s does not contain sub (plain text).
function F.has(s, sub, what)
  if not s:find(sub, 1, true) then
    error(("%s: %q not found in:\n%s"):format(what or "output", sub, s), 0)
  end
end

-- host_suite() -> cases, case (as T.suite) whose every case skips while the host is not built.
function F.host_suite() return T.suite(T.need_host) end

return F
