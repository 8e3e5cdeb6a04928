-- tests/lua/runner.lua FILE -- run one Lua test file and print PASS/FAIL/SKIP lines.
--
-- A test file returns a list of cases. A case is either
--   { name = "...", fn = function() ... end }        -- passes unless it raises
-- or the data-driven form { "name", fn, {args...}, expected [, tol] }: passes when
-- fn(table.unpack(args)) equals `expected` (numbers within tol, tables deep-equal).
-- A case raises T.skip("why") to skip loudly. Every run prints its seed and uses one
-- thread (tests/run.sh sets ATTNLAB_NUM_THREADS=1).
local file = assert(arg[1], "usage: runner.lua TEST_FILE")
package.path = "tests/lua/?.lua;lua/?.lua;lua/?/init.lua;" .. package.path

local T = require "harness"
local seed = tonumber(os.getenv("ATTNLAB_TEST_SEED") or "") or 1234
print(("# %s seed=%d"):format(file, seed))
T.seed = seed

local chunk, err = loadfile(file)
if not chunk then print("FAIL: load " .. file .. " (" .. err .. ")") os.exit(1) end
local ok, cases = pcall(chunk)
if not ok then print("FAIL: load " .. file .. " (" .. tostring(cases) .. ")") os.exit(1) end

local failed = 0
for i, c in ipairs(cases) do
  local name = c.name or c[1] or ("case " .. i)
  if T.reseed then T.reseed(seed) end
  local ok2, e = xpcall(function()
    if c.fn then return c.fn() end
    local got = c[2](table.unpack(c[3] or {}))
    T.eq(got, c[4], c[5], name)
  end, function(m)
    if type(m) == "table" and m.skip then return m end
    return debug.traceback(tostring(m), 2)
  end)
  if ok2 then
    print("PASS: " .. name)
  elseif type(e) == "table" and e.skip then
    print("SKIP: " .. name .. " (" .. e.skip .. ")")
  else
    failed = failed + 1
    print("FAIL: " .. name .. " (" .. tostring(e):gsub("\n", "\n    ") .. ")")
  end
  io.stdout:flush()
end
os.exit(failed == 0 and 0 or 1)
