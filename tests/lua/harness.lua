-- tests/lua/harness.lua -- assertions shared by the Lua tests (see runner.lua).
local T = {}

local function fmt(v)
  if type(v) == "table" then
    local parts = {}
    for i = 1, math.min(#v, 8) do parts[#parts + 1] = fmt(v[i]) end
    if #v > 8 then parts[#parts + 1] = "..." end
    return "{" .. table.concat(parts, ", ") .. "}"
  end
  return tostring(v)
end
T.fmt = fmt

-- Deep equality; numbers within `tol` (absolute, default exact). NaN equals NaN. A table must
-- have no key `want` lacks, so that a nil inside a wanted list ({ x, nil, "no variance" }),
-- which pairs() skips, is checked too. T.eq(got, want, "message") takes the message as `what`.
function T.eq(got, want, tol, what)
  if type(tol) == "string" then tol, what = 0, tol end
  tol = tol or 0
  local function rec(g, w, path)
    if type(w) == "number" and type(g) == "number" then
      if w ~= w and g ~= g then return end
      if w == g then return end
      if math.abs(g - w) <= tol then return end
      error(("%s%s: got %s, want %s (tol %g)"):format(what or "", path, fmt(g), fmt(w), tol), 0)
    elseif type(w) == "table" then
      if type(g) ~= "table" then error(("%s%s: got %s, want a table"):format(what or "", path, fmt(g)), 0) end
      if #g ~= #w then error(("%s%s: got %d entries %s, want %d %s"):format(what or "", path, #g, fmt(g), #w, fmt(w)), 0) end
      for k, v in pairs(w) do rec(g[k], v, path .. "[" .. tostring(k) .. "]") end
      for k, v in pairs(g) do
        if w[k] == nil then error(("%s%s[%s]: got %s, want nil"):format(what or "", path, tostring(k), fmt(v)), 0) end
      end
    elseif g ~= w then
      error(("%s%s: got %s, want %s"):format(what or "", path, fmt(g), fmt(w)), 0)
    end
  end
  rec(got, want, "")
end

-- Relative-or-absolute closeness of two numbers or flat/nested tables.
function T.close(got, want, atol, rtol, what)
  atol, rtol = atol or 1e-6, rtol or 0
  local worst, wi = 0, nil
  local function rec(g, w, path)
    if type(w) == "table" then
      assert(type(g) == "table" and #g == #w, (what or "") .. path .. ": shape differs")
      for i = 1, #w do rec(g[i], w[i], path .. "[" .. i .. "]") end
    else
      local d = math.abs(g - w)
      if g ~= g or w ~= w then d = (g ~= g and w ~= w) and 0 or math.huge end
      local r = d / (atol + rtol * math.abs(w))
      if r > worst then worst, wi = r, path .. (" got %.9g want %.9g"):format(g, w) end
    end
  end
  rec(got, want, "")
  if worst > 1 then error(("%s not close: %s (ratio %.3g)"):format(what or "", wi, worst), 2) end
  return worst
end

-- fn must raise an error whose message contains `pattern` (plain text).
function T.raises(fn, pattern, ...)
  local ok, err = pcall(fn, ...)
  if ok then error("expected an error containing '" .. pattern .. "', got none", 2) end
  err = tostring(err)
  if not err:find(pattern, 1, true) then
    error(("expected an error containing '%s', got: %s"):format(pattern, err), 2)
  end
  return err
end

function T.skip(why) error({ skip = why }, 0) end

-- need_data(load, opts, what) -> load(opts), the dataset; skips loudly when its files are not on
-- this machine ("not found"), but a loader failing for any other reason fails the test.
function T.need_data(load, opts, what)
  local ok, ds = pcall(load, opts)
  if ok then return ds end
  if tostring(ds):find("not found", 1, true) then T.skip(what .. " not found") end
  error(ds, 0)
end

-- need_cores(n): skip loudly on a machine with fewer than n cores. al.set_num_threads clamps to
-- the cores, so a "the same at 1 and 2 threads" test would compare 1 thread with 1 there.
function T.need_cores(n)
  local cores = require("attnlab").config().cores
  if cores < n then T.skip(("needs %d cores, this machine has %d (SKIPPED LOUDLY)"):format(n, cores)) end
end

function T.truthy(v, msg) if not v then error(msg or "expected a true value", 2) end return v end

-- suite([setup]) -> cases, case: a test file's list of cases (what it returns to runner.lua)
-- and the function adding one; `setup`, when given, runs at the start of every case.
function T.suite(setup)
  local cases = {}
  return cases, function(name, fn)
    cases[#cases + 1] = { name = name, fn = setup and function() setup() return fn() end or fn }
  end
end

-- capture_error(fn, ...) -> the message (a string) of the error fn(...) raises; raises
-- "no error raised" when fn returns.
function T.capture_error(fn, ...)
  local ok, e = pcall(fn, ...)
  if ok then error("no error raised", 0) end
  return tostring(e)
end

-- error_case(name, fn, pats [, forbid]) -> a case "error: <name>" that passes when fn() raises
-- an error whose message contains no text of the list `forbid` and every text of `pats`.
function T.error_case(name, fn, pats, forbid)
  return { name = "error: " .. name, fn = function()
    local e = T.capture_error(fn)
    for _, bad in ipairs(forbid or {}) do
      if e:find(bad, 1, true) then error(("message has '%s': %s"):format(bad, e), 0) end
    end
    for _, p in ipairs(pats) do
      if not e:find(p, 1, true) then error(("message lacks '%s': %s"):format(p, e), 0) end
    end
  end }
end

-- Small file and process helpers shared by the tests that spawn bin/attnlab or write files.
-- sh(cmd) -> combined stdout+stderr, exit code (0 on success).
function T.sh(cmd)
  local p = io.popen(cmd .. " 2>&1")
  local out = p:read("a")
  local ok, _, code = p:close()
  return out, ok and 0 or code
end

-- The whole file as a string, or nil when it cannot be opened.
function T.read_file(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

-- write_file(path, s) -> nothing: path now holds exactly s (raises when it cannot be written).
function T.write_file(path, s)
  local f = assert(io.open(path, "wb"))
  f:write(s)
  f:close()
end

-- The host under test: $ATTNLAB_HOST, or bin/attnlab.
T.HOST = os.getenv("ATTNLAB_HOST") or "bin/attnlab"

-- shquote(s) -> s (tostring'd) as one sh word: in single quotes, always.
function T.shquote(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end
local q = T.shquote

-- need_host() -> nothing; skips the case when the host (T.HOST) is not built.
function T.need_host()
  local f = io.open(T.HOST, "rb")
  if not f then T.skip(T.HOST .. " not built (set ATTNLAB_HOST or run make)") end
  f:close()
end

-- run(cmdline, opts) -> stdout, stderr, exit status of the sh command line, run with LUA_INIT and
-- LUA_INIT_5_4 unset and under `timeout`. opts (each optional): env = words set before the
-- command ("VAR=value ..."); unset = the variables to unset (default both LUA_INITs);
-- timeout = seconds (default 120); input = text for stdin (default /dev/null: nothing waits
-- for a terminal); dir = the folder to run in; merge = true sends stderr into stdout (stderr "").
function T.run(cmdline, opts)
  opts = opts or {}
  local unset = {}
  for i, v in ipairs(opts.unset or { "LUA_INIT", "LUA_INIT_5_4" }) do unset[i] = "-u " .. v end
  local inf = opts.input and os.tmpname()
  if inf then T.write_file(inf, opts.input) end
  local errf = not opts.merge and os.tmpname()
  local p = io.popen(("%senv %s %s timeout %d %s <%s %s"):format(opts.dir and ("cd " .. q(opts.dir) .. " && ") or "",
    table.concat(unset, " "), opts.env or "", opts.timeout or 120, cmdline, inf or "/dev/null",
    errf and ("2>" .. errf) or "2>&1"))
  local out = p:read("a")
  local _, _, code = p:close()
  local err = errf and T.read_file(errf) or ""
  if errf then os.remove(errf) end
  if inf then os.remove(inf) end
  return out, err, code
end

-- run_host(args, opts) -> stdout, stderr, exit status of `HOST args` (args: sh words, quoted by
-- the caller), as T.run runs it; opts.host: another host path than T.HOST.
function T.run_host(args, opts)
  return T.run(q(opts and opts.host or T.HOST) .. " " .. args, opts)
end

-- tmpname([suffix]) -> a fresh temporary path ending in suffix, with nothing there yet.
function T.tmpname(suffix)
  local base = os.tmpname()   -- (the empty file os.tmpname makes is removed)
  os.remove(base)
  return base .. (suffix or "")
end

-- tmpscript(src) -> the path of a new temporary .lua file holding src (the caller removes it).
function T.tmpscript(src)
  local p = T.tmpname(".lua")
  T.write_file(p, src)
  return p
end

-- tmpdir(tag [, made]) -> the path of a fresh empty folder /tmp/attnlab-test-<tag>.XXXXXX (T.rm_rf
-- removes it); also appended to the list `made` when given (for a later cleanup).
function T.tmpdir(tag, made)
  local p = io.popen("mktemp -d /tmp/attnlab-test-" .. tag .. ".XXXXXX")
  local d = p:read("l")
  p:close()
  assert(d, "mktemp -d failed")
  if made then made[#made + 1] = d end
  return d
end

-- rm_rf(dir) -> nothing: removes dir and all in it; dir must sit directly in /tmp (as T.tmpdir's
-- and T.tmpname's paths do), so that a wrong path cannot remove anything else.
function T.rm_rf(dir)
  assert(dir:match("^/tmp/[%w_%-][%w_%.%-]*$"), "rm_rf: not a temporary path: " .. tostring(dir))
  os.execute("rm -rf " .. q(dir))
end

return T
