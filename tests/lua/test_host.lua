-- tests/lua/test_host.lua -- lua/attnlab/format.lua (against PyTorch's own output) and the
-- bin/attnlab host (spawned with io.popen: options, arg table, exit status, piped REPL,
-- Ctrl-C; readline behaviour through tmux when it is installed).
--
-- Run: lua5.4 tests/lua/runner.lua tests/lua/test_host.lua   (or via bin/attnlab, as run.sh does)
-- The host under test is $ATTNLAB_HOST or bin/attnlab; host cases SKIP when it is missing.
-- Needs no terminal. format is tested on a fake tensor class (nested Lua tables) so it does
-- not depend on the binding; tests/ref/format_ref.json comes from tests/ref/gen_format_ref.py.
local T = require "harness"
local format = require "attnlab.format"

local HOST = os.getenv("ATTNLAB_HOST") or "bin/attnlab"
local REF = "tests/ref/format_ref.json"

------------------------------------------------------------------------------------------
-- Small utilities
local readfile = T.read_file
local writefile = T.write_file

local function q(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

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

local cases = {}
local function case(name, fn) cases[#cases + 1] = { name = name, fn = fn } end

------------------------------------------------------------------------------------------
-- format.lua against PyTorch (one case per reference tensor)

local ref_text = readfile(REF)
local ref = ref_text and json_decode(ref_text)
if not ref then
  case("format: reference file " .. REF, function() error("missing " .. REF) end)
else
  for _, c in ipairs(ref.cases) do
    case("format vs torch " .. ref.torch .. ": " .. c.name, function()
      local got = format(fake_from_case(c), { footer = false })
      same_text(got, c.expected, c.name)
    end)
  end
end

------------------------------------------------------------------------------------------
-- format.lua: footer, options, summarised reads, argument errors

case("format: footer line names dtype and shape (2-D, 1-D, 0-dim, int64, empty)", function()
  local s = format(Fake.new({ 0.1234, -1, 2.5, 3 }, { 2, 2 }))
  same_text(s, "tensor([[ 0.1234, -1.0000],\n        [ 2.5000,  3.0000]])\n" ..
               "[float32 tensor of shape (2, 2)]", "2x2")
  same_text(format(Fake.new({ 1, 2, 3 }, { 3 }, { dtype = "int64" })),
            "tensor([1, 2, 3])\n[int64 tensor of shape (3,)]", "int64")
  same_text(format(Fake.new({ 3.5 }, {})), "tensor(3.5000)\n[float32 tensor of shape ()]", "0-dim")
  same_text(format(Fake.new({}, { 0, 3 })),
            "tensor([], size=(0, 3))\n[float32 tensor of shape (0, 3)]", "empty")
end)

-- expected strings: torch.set_printoptions(...) with the same options, then print
case("format: options precision, linewidth, sci_mode, edgeitems, threshold", function()
  local t = Fake.new({ 0.123456, -1.5, 2.25 }, { 3 })
  same_text(format(t, { footer = false, precision = 2 }), "tensor([ 0.12, -1.50,  2.25])", "precision")
  same_text(format(t, { footer = false, sci_mode = true }),
            "tensor([1.2346e-01, -1.5000e+00, 2.2500e+00])", "sci_mode=true") -- width from fixed
  same_text(format(Fake.new({ 1e-5, 1 }, { 2 }), { footer = false, sci_mode = false }),
            "tensor([    0.0000,     1.0000])", "sci_mode=false") -- width from sci
  same_text(format(t, { footer = false, linewidth = 20 }),
            "tensor([ 0.1235,\n        -1.5000,\n         2.2500])", "linewidth=20")
  local flat = {}
  for i = 1, 10 do flat[i] = i end
  same_text(format(Fake.new(flat, { 10 }, { dtype = "int64" }), { footer = false, threshold = 5, edgeitems = 2 }),
            "tensor([ 1,  2,  ...,  9, 10])", "threshold=5 edgeitems=2")
end)

case("format: bad arguments are clear errors", function()
  T.raises(function() format(Fake.new({ 1 }, { 1 }), { precison = 3 }) end, "unknown option 'precison'")
  T.raises(function() format(Fake.new({ 1 }, { 1 }), 5) end, "expected an options table")
end)

-- expected: print((torch.arange(1000000, dtype=torch.float64) * 0.5).float().reshape(1000, 1000))
case("format: a summarised 1000x1000 tensor reads only its 36 corner entries", function()
  local lazy = setmetatable({}, { __index = function(_, i) return (i - 1) * 0.5 end })
  local t = Fake.new(lazy, { 1000, 1000 })
  Fake.reads = 0
  local s = format(t, { footer = false })
  T.truthy(Fake.reads == 36, "read " .. Fake.reads .. " entries, want 36")
  same_text(s, table.concat({
    "tensor([[0.0000e+00, 5.0000e-01, 1.0000e+00,  ..., 4.9850e+02, 4.9900e+02,",
    "         4.9950e+02],",
    "        [5.0000e+02, 5.0050e+02, 5.0100e+02,  ..., 9.9850e+02, 9.9900e+02,",
    "         9.9950e+02],",
    "        [1.0000e+03, 1.0005e+03, 1.0010e+03,  ..., 1.4985e+03, 1.4990e+03,",
    "         1.4995e+03],",
    "        ...,",
    "        [4.9850e+05, 4.9850e+05, 4.9850e+05,  ..., 4.9900e+05, 4.9900e+05,",
    "         4.9900e+05],",
    "        [4.9900e+05, 4.9900e+05, 4.9900e+05,  ..., 4.9950e+05, 4.9950e+05,",
    "         4.9950e+05],",
    "        [4.9950e+05, 4.9950e+05, 4.9950e+05,  ..., 5.0000e+05, 5.0000e+05,",
    "         5.0000e+05]])" }, "\n"), "1000x1000")
end)

-- The same reference cases through the real binding's tensors (its narrow/totable/fields).
-- Cases with a grad_fn are left out (attnlab names its nodes differently), and so are
-- 0-dim and empty ones (al.tensor takes nested tables).
case("format vs torch through the real binding (when al.tensor exists)", function()
  local ok, al = pcall(require, "attnlab")
  if not ok or type(al) ~= "table" or type(al.tensor) ~= "function" then
    T.skip("al.tensor not available")
  end
  local n = 0
  for _, c in ipairs(ref and ref.cases or {}) do
    local numel = 1
    for _, d in ipairs(c.shape) do numel = numel * d end
    if not c.grad_fn_name and #c.shape > 0 and numel > 0 then
      local flat = {}
      for i, v in ipairs(c.data) do flat[i] = NONFINITE[v] or v end
      local pos = 0
      local function nest(d)
        local t = {}
        for i = 1, c.shape[d] do
          if d == #c.shape then pos = pos + 1; t[i] = flat[pos] else t[i] = nest(d + 1) end
        end
        return t
      end
      local t = al.tensor(nest(1), { dtype = c.dtype, requires_grad = c.requires_grad or nil })
      same_text(format(t, { footer = false }), c.expected, "al.tensor: " .. c.name)
      n = n + 1
    end
  end
  T.truthy(n >= 30, "only " .. n .. " cases ran")
end)

------------------------------------------------------------------------------------------
-- The host

local function host_exists()
  local f = io.open(HOST, "rb")
  if f then f:close() return true end
  return false
end

local function need_host()
  if not host_exists() then T.skip(HOST .. " not built (set ATTNLAB_HOST or run make)") end
end

-- Runs a shell command line; returns stdout, stderr, exit status. `input` goes to stdin
-- (/dev/null when nil, so the host never waits for a terminal).
local function run(cmdline, input)
  local errf, inf = os.tmpname(), os.tmpname()
  writefile(inf, input or "")
  local p = io.popen(("env -u LUA_INIT -u LUA_INIT_5_4 timeout 60 %s <%s 2>%s"):format(cmdline, inf, errf), "r")
  local out = p:read("a")
  local _, _, code = p:close()
  local err = readfile(errf) or ""
  os.remove(errf); os.remove(inf)
  return out, err, code
end

local function host(args, input) return run(q(HOST) .. " " .. args, input) end

local function has(s, sub, what)
  if not s:find(sub, 1, true) then
    error(("%s: %q not found in:\n%s"):format(what or "output", sub, s), 0)
  end
end

local function tmpscript(src)
  local p = os.tmpname() .. ".lua"
  writefile(p, src)
  return p
end

case("host: -v prints 'attnlab <version> (Lua 5.4.x)'", function()
  need_host()
  local out, err, code = host("-v")
  T.eq(code, 0, nil, "exit status")
  T.truthy(out:match("^attnlab %S+ %(Lua 5%.4%.%d+%)\n$"), "got: " .. out .. err)
end)

case("host: --version prints the -v line, with the version of include/attnlab/version.h", function()
  need_host()
  local out, err, code = host("--version")
  T.eq(code, 0, nil, "exit status")
  local v, _, vcode = host("-v")
  T.eq(vcode, 0, nil, "-v exit status")
  T.eq(out, v, nil, "--version vs -v (stderr: " .. err .. ")")
  local h = readfile("include/attnlab/version.h")
  local want = h:match("ATTNLAB_VERSION_MAJOR (%d+)") .. "." .. h:match("ATTNLAB_VERSION_MINOR (%d+)") .. "."
    .. h:match("ATTNLAB_VERSION_PATCH (%d+)")
  T.eq(out:match("^attnlab (%S+) "), want, nil, "version")
  local lv = host([[-e "io.write(al.version)"]])
  T.eq(lv, want, nil, "al.version")
end)

case("host: a relative script path missing from the current folder runs from the checkout (arg[0] too)", function()
  need_host()
  local abs = HOST:sub(1, 1) == "/" and HOST or (os.getenv("PWD") .. "/" .. HOST)
  local function from_root(args) return run("sh -c " .. q("cd / && exec " .. q(abs) .. " " .. args)) end
  local out, err, code = from_root("tests/lua/harness.lua_missing_on_purpose")
  T.truthy(code ~= 0, "a path missing everywhere still fails")
  has(err, "cannot open tests/lua/harness.lua_missing_on_purpose", "stderr")
  local script = "tests/lua/host_arg0_probe.lua"
  writefile(script, "io.write(arg[0], ' ', select('#', ...))")
  out, err, code = from_root(script .. " a b")
  os.remove(script)
  T.eq(code, 0, nil, "exit status (stderr: " .. err .. ")")
  T.truthy(out:match("^/.*/tests/lua/host_arg0_probe%.lua 2$"), "arg[0] is the resolved path: " .. out)
end)

case("host: -e runs statements in order; print output", function()
  need_host()
  local out, _, code = host([[-e "x = 20" -e "print(x + 22)"]])
  T.eq(code, 0, nil, "exit status")
  T.eq(out, "42\n")
end)

case("host: package.path starts with the checkout's lua/ and finds this format.lua", function()
  need_host()
  local out = host([[-e "print(package.path)" -e "print(package.searchpath('attnlab.format', package.path))"]])
  local path, found = out:match("^(.-)\n(.-)\n$")
  local root = path and path:match("^(/[^;]*)/lua/%?%.lua;")
  T.truthy(root, "package.path does not start with <abs root>/lua/?.lua: " .. tostring(path))
  local prefix = root .. "/lua/?.lua;" .. root .. "/lua/?/init.lua;"
  T.truthy(path:sub(1, #prefix) == prefix, "second entry is not <root>/lua/?/init.lua: " .. path)
  T.eq(found, root .. "/lua/attnlab/format.lua")
  T.truthy(readfile(found) == readfile("lua/attnlab/format.lua"), found .. " is not this checkout's format.lua")
end)

case("host: attnlab.core is preloaded (statically linked)", function()
  need_host()
  local out = host([[-e "print(type(package.preload['attnlab.core']))"]])
  T.eq(out, "function\n")
end)

case("al: every lazily loaded submodule name loads (al.debug, al.plot were listed without a file)", function()
  need_host()
  local out, err, code = host([[-e "local n = 0; for _, k in ipairs(al.submodules()) do assert(al[k] ~= nil, k); assert(al[k] == package.loaded['attnlab.' .. k], k); n = n + 1 end; print(n, al.debug, al.plot)"]])
  T.eq(code, 0, nil, "exit status (stderr: " .. err .. ")")
  T.eq(out, "13\tnil\tnil\n")
end)

case("host: tostring(tensor) uses the formatter the Lua library installs, a one-line summary without it", function()
  need_host()
  local out, err, code = host([[-e "local t = al.tensor{1, 2}; print(tostring(t) == require('attnlab.format')(t)); debug.getregistry()['attnlab.Tensor.formatter'] = nil; print(tostring(t))"]])
  T.eq(code, 0, nil, "exit status (stderr: " .. err .. ")")
  T.eq(out, "true\nTensor(float32 (2))\n")
end)

case("host: global al = require 'attnlab' (or a one-line warning while the package is missing)", function()
  need_host()
  local out, err, code = host([[-e "print(type(al), al == package.loaded.attnlab)"]])
  T.eq(code, 0, nil, "exit status")
  if readfile("lua/attnlab/init.lua") then
    T.eq(out, "table\ttrue\n", nil, "(stderr: " .. err .. ")")
  else
    T.eq(out, "nil\tfalse\n")
    has(err, "attnlab: warning: global 'al' not set", "stderr")
    T.truthy(not err:find("\n.", 1), "warning should be one line: " .. err)
  end
end)

-- arg table and ... exactly as lua5.4 builds them
local ARG_SCRIPT = [[
local t = {}
for i = -6, #arg do t[#t + 1] = i .. "=" .. tostring(arg[i]) end
print(table.concat(t, "|"))
print(select("#", ...), ...)
]]

case("host: script arg table (negative indices, --) and ... match lua5.4", function()
  need_host()
  local script = tmpscript(ARG_SCRIPT)
  local args = ([[-W -e "x=1" -- %s a "b c" ""]]):format(q(script))
  local out, err, code = host(args)
  T.eq(code, 0, nil, "exit status (" .. err .. ")")
  local want = ("-6=nil|-5=%s|-4=-W|-3=-e|-2=x=1|-1=--|0=%s|1=a|2=b c|3=\n3\ta\tb c\t\n"):format(HOST, script)
  same_text(out, want, "arg table")
  -- the stock interpreter, where installed, agrees except for its own name
  local lout = run("lua5.4 " .. args)
  if lout ~= "" then same_text(out, (lout:gsub("%-5=[^|]*", "-5=" .. HOST:gsub("%%", "%%%%"))), "vs lua5.4") end
  os.remove(script)
end)

case("host: no script: arg[0] is the interpreter, options are arg[1..]", function()
  need_host()
  local out = host([[-e "print(arg[0], arg[1], arg[2], arg[-1])"]])
  T.eq(out, HOST .. "\t-e\tprint(arg[0], arg[1], arg[2], arg[-1])\tnil\n")
end)

case("host: '-' runs stdin as the script with args; no args + piped stdin runs stdin", function()
  need_host()
  local out, _, code = host("- a b", "print(...) print(arg[0])")
  T.eq(code, 0, nil, "exit status")
  T.eq(out, "a\tb\n-\n")
  out = host("", "print(40 + 2)")
  T.eq(out, "42\n")
end)

case("host: script error -> exit 1, 'attnlab: <msg>' and traceback on stderr", function()
  need_host()
  local script = tmpscript("local function f()\n  error('boom')\nend\nf()\n")
  local out, err, code = host(q(script))
  T.eq(code, 1, nil, "exit status")
  T.eq(out, "")
  has(err, "attnlab: " .. script .. ":2: boom\nstack traceback:\n", "stderr")
  has(err, "in local 'f'", "stderr")
  os.remove(script)
end)

case("host: syntax error, missing file, non-string error object, os.exit code", function()
  need_host()
  local script = tmpscript("x = = 1\n")
  local _, err, code = host(q(script))
  T.eq(code, 1, nil, "syntax error status")
  has(err, "attnlab: " .. script .. ":1:", "syntax error")
  os.remove(script)
  _, err, code = host("/nonexistent/nothing.lua")
  T.eq(code, 1, nil, "missing file status")
  has(err, "attnlab: cannot open /nonexistent/nothing.lua", "missing file")
  _, err, code = host([[-e "error({})"]])
  T.eq(code, 1, nil, "table error status")
  has(err, "attnlab: (error object is a table value)\nstack traceback:", "table error")
  _, err, code = host([[-e "error(setmetatable({}, {__tostring = function() return 'custom' end}))"]])
  T.eq(code, 1, nil, "__tostring error status")
  has(err, "attnlab: custom", "__tostring error")
  local _, _, c3 = host([[-e "os.exit(3)"]])
  T.eq(c3, 3, nil, "os.exit(3)")
end)

case("host: bad options print usage and exit 1; --help exits 0", function()
  need_host()
  local out, err, code = host("-x")
  T.eq(code, 1, nil, "-x status")
  has(err, "attnlab: unrecognized option '-x'\nusage: attnlab [options] [script [args]]", "-x")
  _, err, code = host("-e")
  T.eq(code, 1, nil, "-e status")
  has(err, "attnlab: '-e' needs argument", "-e")
  _, err, code = host("-l -e x=1")
  T.eq(code, 1, nil, "-l status")
  has(err, "attnlab: '-l' needs argument", "-l")
  _, err, code = host("-vx")
  has(err, "unrecognized option '-vx'", "-vx")
  _, err, code = host("--bogus")
  has(err, "unrecognized option '--bogus'", "--bogus")
  out, err, code = host("--help")
  T.eq(code, 0, nil, "--help status")
  has(out, "usage: attnlab [options] [script [args]]", "--help")
  has(out, "The global 'al'", "--help")
  T.eq(err, "")
end)

case("host: -l mod and -l g=mod", function()
  need_host()
  local out, err, code = host([[-l fmt=attnlab.format -l string -e "print(type(fmt), fmt == require('attnlab.format'))"]])
  T.eq(code, 0, nil, "exit status " .. err)
  T.eq(out, "function\ttrue\n")
  local _, err2, code2 = host([[-l no_such_module_xyz -e "print(1)"]])
  T.eq(code2, 1, nil, "missing module status")
  has(err2, "attnlab: module 'no_such_module_xyz' not found", "missing module")
end)

case("host: -W turns warnings on", function()
  need_host()
  local _, err = host([[-W -e "warn('hello')"]])
  has(err, "Lua warning: hello", "with -W")
  _, err = host([[-e "warn('hello')"]])
  T.truthy(not err:find("Lua warning"), "warning printed without -W: " .. err)
end)

case("host: LUA_INIT, @file, LUA_INIT_5_4 precedence, -E, errors", function()
  need_host()
  local out = run("env LUA_INIT='init_x = 42' " .. q(HOST) .. [[ -e "print(init_x)"]])
  T.eq(out, "42\n", nil, "LUA_INIT")
  local f = tmpscript("init_y = 'from file'\n")
  out = run("env LUA_INIT=@" .. q(f) .. " " .. q(HOST) .. [[ -e "print(init_y)"]])
  T.eq(out, "from file\n", nil, "LUA_INIT=@file")
  os.remove(f)
  out = run("env LUA_INIT='v = 1' LUA_INIT_5_4='v = 2' " .. q(HOST) .. [[ -e "print(v)"]])
  T.eq(out, "2\n", nil, "LUA_INIT_5_4 wins")
  out = run("env LUA_INIT='v = 1' " .. q(HOST) .. [[ -E -e "print(v)"]])
  T.eq(out, "nil\n", nil, "-E ignores LUA_INIT")
  local _, err, code = run("env LUA_INIT='error(\"in init\")' " .. q(HOST) .. [[ -e "print(1)"]])
  T.eq(code, 1, nil, "LUA_INIT error status")
  has(err, "attnlab: LUA_INIT:1: in init", "LUA_INIT error")
end)

-- The REPL with piped input (no readline): prompts go to stdout, as lua.c does.
case("host: piped REPL: multi-line function, expressions, =, results, errors keep it alive", function()
  need_host()
  local fake = os.tmpname()
  writefile(fake, FAKE_SRC)
  local input = table.concat({
    "function f(x)",
    "  return x * 2",
    "end",
    "f(21)",
    "error('oops')",
    "print('after error')",
    "1, 'a', nil",
    "=3+4",
    "Fake = dofile(" .. ("%q"):format(fake) .. ")",
    "Fake.new({1.5, 2}, {2})",
    "_PROMPT = 'PX> '",
    "return 'last'",
    "" }, "\n")
  local out, err, code = host("-i", input)
  os.remove(fake)
  T.eq(code, 0, nil, "exit status")
  T.truthy(out:match("^attnlab %S+ %(Lua 5%.4"), "version line first (-i implies -v): " .. out)
  has(out, "> >> >> > 42\n", "continuation prompts and f(21)")
  has(out, "after error\n", "the REPL survives an error")
  has(out, "1\ta\tnil\n", "several results, tab-separated")
  has(out, "> 7\n", "= prefix")
  has(out, "tensor([1.5000, 2.0000])\n[float32 tensor of shape (2,)]\n", "tensors print via attnlab.format")
  has(out, "PX> last\n", "_PROMPT")
  has(err, "stdin:1: oops\nstack traceback:\n", "error message with traceback")
end)

case("host: piped REPL: an unfinished statement at end of input reports the syntax error", function()
  need_host()
  local out, err, code = host("-i", "function g(\n")
  T.eq(code, 0, nil, "exit status")
  has(out, "> >> ", "continuation prompt")
  has(err, "near <eof>", "syntax error")
end)

case("host: -i after a script keeps its globals; -e then -i", function()
  need_host()
  local script = tmpscript("y = 21\n")
  local out = host("-i " .. q(script), "print(y * 2)\n")
  has(out, "> 42\n", "global from the script")
  out = host([[-e "z = 5" -i]], "z + 1\n")
  has(out, "> 6\n", "global from -e")
  os.remove(script)
end)

case("host: Ctrl-C (SIGINT) stops a running script with 'interrupted!'", function()
  need_host()
  local t0 = os.time()
  -- --foreground: without it timeout signals the child and then its whole process group,
  -- and a second SIGINT that lands after the first was handled ends the process (as with
  -- lua.c), so the test would race timeout itself.
  local _, err, code = run("timeout --foreground --preserve-status -s INT 1 " .. q(HOST) .. [[ -e "while true do end"]])
  T.eq(code, 1, nil, "exit status")
  has(err, "interrupted!", "stderr")
  T.truthy(os.time() - t0 < 20, "took too long")
end)

case("host: Ctrl-C in the REPL stops the statement and the REPL goes on", function()
  need_host()
  local dir = os.tmpname()
  os.remove(dir)
  local sh = ([[
d=%s; mkdir -p "$d"
( printf 'io.write("LOOPING\\n") io.stdout:flush() while true do end\n'
  i=0; while [ ! -e "$d/sent" ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done
  printf 'print("alive")\n' ) | %s -i >"$d/out" 2>"$d/err" &
pid=$!
i=0; while ! grep -q LOOPING "$d/out" 2>/dev/null && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done
sleep 0.3; kill -INT $pid; touch "$d/sent"
wait $pid; echo "rc=$?"; cat "$d/out"; echo "=====";  cat "$d/err"; rm -rf "$d"
]]):format(q(dir), q(HOST))
  local out = run("sh -c " .. q(sh))
  has(out, "rc=0\n", "exit status")
  has(out, "interrupted!", "stderr")
  has(out, "alive\n", "REPL alive after the interrupt")
end)

-- readline behaviour needs a terminal: tmux provides one when installed.
case("host: terminal REPL (tmux): banner, completion, Ctrl-C at the prompt and while running, history", function()
  need_host()
  if os.execute("command -v tmux >/dev/null 2>&1") ~= true then T.skip("tmux not installed") end
  local with_al = host([[-e "io.write(tostring(type(al) == 'table' and al.zeros ~= nil))"]]) == "true"
  local sock = ("attnlab_test_%d_%d"):format(os.time(), math.random(1 << 30))
  local hist = os.tmpname()
  local function tm(args) return os.execute("tmux -L " .. sock .. " " .. args .. " >/dev/null 2>&1") end
  local function screen()
    local p = io.popen("tmux -L " .. sock .. " capture-pane -p 2>/dev/null")
    local s = p:read("a"); p:close()
    return s
  end
  local function wait_for(pat, what)
    for _ = 1, 150 do
      local s = screen()
      if s:find(pat, 1, true) then return s end
      os.execute("sleep 0.1")
    end
    error(("%s: %q did not appear; screen:\n%s"):format(what, pat, screen()), 0)
  end
  local function keys(...)
    local a = {}
    for i, k in ipairs({ ... }) do a[i] = q(k) end
    tm("send-keys -t " .. sock .. " " .. table.concat(a, " "))
  end
  local function literal(s) tm("send-keys -t " .. sock .. " -l " .. q(s)) end
  local ok, e = pcall(function()
    assert(tm(("new-session -d -s %s -x 120 -y 40 %s"):format(sock,
      q("env ATTNLAB_HISTORY=" .. q(hist) .. " " .. q(HOST) .. "; echo HOST-EXIT=$?; sleep 30"))),
      "tmux new-session failed")
    wait_for("al.<tab> completes; help: al.help()", "banner")
    local s = screen()
    T.truthy(s:match("attnlab %S+ %(Lua 5%.4%.%d+%)"), "banner first line: " .. s)
    literal("string.fo"); keys("Tab")
    wait_for("> string.format(", "completion of string.fo")
    literal('"%d", 6 * 7)'); keys("Enter")
    wait_for("\n42\n", "completed call ran")
    literal("abc = {value = 1}"); keys("Enter")
    literal("abc.va"); keys("Tab")
    wait_for("> abc.value", "field completion")
    keys("Enter")
    wait_for("\n1\n", "field value")
    literal("half typed"); os.execute("sleep 0.3"); keys("C-c")
    wait_for("> half typed^C\n>", "Ctrl-C at the prompt")
    literal("while true do end"); keys("Enter")
    os.execute("sleep 0.5"); keys("C-c")
    wait_for("interrupted!", "Ctrl-C while running")
    literal("print('still here')"); keys("Enter")
    wait_for("\nstill here\n", "REPL alive")
    if with_al then  -- methods of a tensor userdata after ':'
      literal("t = al.zeros({2})"); keys("Enter")
      literal("t:nume"); keys("Tab")
      wait_for("> t:numel(", "tensor method completion")
      literal(")"); keys("Enter")
      wait_for("\n2\n", "t:numel()")
    end
    keys("C-d")
    wait_for("HOST-EXIT=0", "Ctrl-D exits with status 0")
  end)
  tm("kill-server")
  local h = readfile(hist) or ""
  os.remove(hist)
  if not ok then error(e, 0) end
  has(h, "abc = {value = 1}\n", "history file")
  has(h, "print('still here')\n", "history file")
end)

return cases
