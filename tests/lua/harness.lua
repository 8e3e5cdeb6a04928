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

-- Deep equality; numbers within `tol` (absolute, default exact). NaN equals NaN.
function T.eq(got, want, tol, what)
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

function T.truthy(v, msg) if not v then error(msg or "expected a true value", 2) end return v end

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

function T.write_file(path, s)
  local f = assert(io.open(path, "wb"))
  f:write(s)
  f:close()
end

return T
