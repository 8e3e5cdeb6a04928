-- attnlab.run.cli (also attnlab.cli) -- the one command-line parser of the scripts: an option spec table in, parsed
-- options out; --help, usage errors and user errors handled the same way everywhere.
--
--   local cli = require "attnlab.cli"
--   local SPEC = {
--     name = "bench_linear.lua",
--     usage = "bin/attnlab scripts/bench_linear.lua [--threads N] [--reps R]",
--     about = "The linear layer's forward+backward against raw sgemm.",
--     options = {
--       { "threads", "N", "threads (default: all cores)", type = "posint" },
--       { "reps", "R", "timed repetitions (default 30)", type = "posint", default = 30 },
--       { "no-torch", nil, "skip the PyTorch reference" },          -- a flag: no value
--     },
--     positional = { { "EXPERIMENT", "a Lua file or a name under experiments/" } },  -- optional
--     examples = { "bin/attnlab scripts/bench_linear.lua --threads 2" },
--   }
--   local opts, rest = cli.parse(SPEC, arg)   -- opts.threads, opts.reps, opts.no_torch
--
-- Every script then answers --help / -h with its usage, options and an example (exit 0), and an
-- unknown option, a missing or malformed value gets one line naming it plus the usage line
-- (exit 2). Options are --key value or --key=value; '-' in a name is '_' in opts. Value types:
-- "string" (default), "int", "posint" (>= 1), "count" (a size or a count: 1 <= n < 2^31), "nonneg"
-- (integer >= 0), "number" (finite), "posnum" (> 0), "bool" (true|false|1|0|yes|no), "ints" /
-- "names" (comma lists; a name list has no empty or repeated entry), "auto" (true/false, a number
-- or the string), or a function(value_string) -> value | nil, why. A flag (no value
-- placeholder) is true when given. `repeat = true` collects every occurrence in a list; `raw = true`
-- takes the next argument as the value even when it starts with "--" (--sbatch --partition=x).
-- spec.extra = function(key, value_string) -> value | nil, why accepts keys not in the list (the
-- training keys of train.lua); spec.positional lists positional arguments (extra ones are
-- errors unless spec.rest is set). Adding an option is one line in the spec.
--
-- cli.run(SPEC, arg, main) parses arg, runs main(opts, rest) and turns any error into ONE line on stderr,
-- "name: message" (no Lua position, no traceback; ATTNLAB_TRACEBACK=1 shows it), exit 1 --
-- or the integer main returns. cli.die(SPEC or name, msg [, code]) prints one line and exits.
local cli = {}
local util = require "attnlab.util"

local function out(s) io.stdout:write(s) end
local function err(s) io.stderr:write(s) end

local function script_name(spec) return type(spec) == "table" and spec.name or tostring(spec) end

-- One user-facing line: the Lua source position ("scripts/x.lua:12: ") adds nothing for a user,
-- and NaN is spelled "nan" whatever printf calls it.
function cli.clean(msg)
  msg = tostring(msg)
  for _ = 1, 3 do
    local stripped = util.error_text(msg):gsub("^%[string \"[^\"]*\"%]:%d+: ", "")
    if stripped == msg then break end
    msg = stripped
  end
  return (msg:gsub("%-nan", "nan"))
end

-- A value as a message shows it: strings quoted, NaN as nan, tables by type.
cli.show = util.show

function cli.die(spec, msg, code)
  local name = script_name(spec)
  msg = cli.clean(msg)
  local stem = name:gsub("%.lua$", "")
  if msg:sub(1, #stem + 2) == stem .. ": " then msg = msg:sub(#stem + 3) end   -- not "train.lua: train: ..."
  err(name .. ": " .. msg .. "\n")
  io.stderr:flush()
  os.exit(code or 1)
end

-- ---- value types -------------------------------------------------------------------------
local function int_of(s) return math.tointeger(tonumber(s)) end
-- The bound of "count", the one train.config puts on its sizes and counts: a batch of 2^63 - 1
-- overflowed the loader's batch count to 0, and the run took no step yet reported a result.
cli.MAX_COUNT = (1 << 31) - 1
local TYPES = {
  string = function(s) return s end,
  int = function(s) return int_of(s) or nil, "an integer" end,
  posint = function(s) local n = int_of(s) if n and n >= 1 then return n end return nil, "a positive integer" end,
  count = function(s)
    local n = int_of(s)
    if n and n >= 1 and n <= cli.MAX_COUNT then return n end
    return nil, (n and n > cli.MAX_COUNT) and "a positive integer below 2^31" or "a positive integer"
  end,
  nonneg = function(s) local n = int_of(s) if n and n >= 0 then return n end return nil, "an integer >= 0" end,
  -- finite: no option means inf ("1e999" reads as inf), so a script need not check for it itself
  number = function(s) local n = tonumber(s) if n and math.abs(n) < math.huge then return n end return nil, "a finite number" end,
  posnum = function(s) local n = tonumber(s) if n and n > 0 and n < math.huge then return n end return nil, "a number > 0" end,
  bool = function(s)
    if s == "true" or s == "1" or s == "yes" then return true end
    if s == "false" or s == "0" or s == "no" then return false end
    return nil, "true or false"
  end,
  ints = function(s)
    local t = {}
    for part in (s .. ","):gmatch("([^,]*),") do
      local n = int_of(part)
      if not n or n < 1 then return nil, "a comma-separated list of positive integers" end
      t[#t + 1] = n
    end
    return t
  end,
  -- (an empty entry, "a,,b", was dropped silently; a repeated one, "a,a", did the work twice)
  names = function(s)
    local t, seen = {}, {}
    for part in (s .. ","):gmatch("([^,]*),") do
      if part == "" then return nil, "a comma-separated list of names (no empty one)" end
      if seen[part] then return nil, ("a comma-separated list of names, each once ('%s' is given twice)"):format(part) end
      seen[part] = true
      t[#t + 1] = part
    end
    return t
  end,
  auto = function(s)
    if s == "true" then return true elseif s == "false" then return false end
    return int_of(s) or tonumber(s) or s
  end,
}
cli.TYPES = TYPES

local function convert(kind, s)
  local f = type(kind) == "function" and kind or TYPES[kind or "string"]
  if not f then error("cli: unknown option type " .. tostring(kind), 2) end
  return f(s)
end
cli.convert = convert

-- ---- help -------------------------------------------------------------------------------------
function cli.usage_line(spec)
  return "usage: " .. (spec.usage or ("bin/attnlab scripts/" .. spec.name .. " [options]"))
end

function cli.help(spec)
  local lines = { cli.usage_line(spec) }
  if spec.about then lines[#lines + 1] = "" lines[#lines + 1] = spec.about end
  if spec.positional and #spec.positional > 0 then
    lines[#lines + 1] = ""
    lines[#lines + 1] = "arguments:"
    for _, p in ipairs(spec.positional) do lines[#lines + 1] = ("  %-24s %s"):format(p[1], p[2] or "") end
  end
  local opts = spec.options or {}
  if #opts > 0 or spec.more_options then
    lines[#lines + 1] = ""
    lines[#lines + 1] = "options:"
    for _, o in ipairs(opts) do
      local left = "--" .. o[1] .. (o[2] and (" " .. o[2]) or "")
      local text = o[3] or ""
      if #left > 24 then
        lines[#lines + 1] = "  " .. left
        lines[#lines + 1] = ("  %-24s %s"):format("", text)
      else
        lines[#lines + 1] = ("  %-24s %s"):format(left, text)
      end
    end
    if spec.more_options then
      for _, l in ipairs(type(spec.more_options) == "function" and spec.more_options() or spec.more_options) do
        lines[#lines + 1] = l
      end
    end
    lines[#lines + 1] = ("  %-24s %s"):format("--help, -h", "print this help and exit")
  end
  if spec.notes then lines[#lines + 1] = "" lines[#lines + 1] = spec.notes end
  if spec.examples and #spec.examples > 0 then
    lines[#lines + 1] = ""
    lines[#lines + 1] = "example" .. (#spec.examples > 1 and "s" or "") .. ":"
    for _, e in ipairs(spec.examples) do lines[#lines + 1] = "  " .. e end
  end
  return table.concat(lines, "\n") .. "\n"
end

-- The command that runs the script, as its usage line spells it ("bin/attnlab
-- experiments/s2s/study.lua"); scripts/NAME when the spec has no usage line.
local function command_of(spec)
  local c = type(spec) == "table" and spec.usage and spec.usage:match("^(%S+ %S+%.lua)")
  return c or ("bin/attnlab scripts/" .. script_name(spec))
end

-- A usage error: one line naming it, the usage line, a pointer to --help; exit 2.
function cli.usage_error(spec, msg)
  err(script_name(spec) .. ": " .. msg .. "\n" .. cli.usage_line(spec) .. "\n" ..
      "(" .. command_of(spec) .. " --help lists every option)\n")
  io.stderr:flush()
  os.exit(2)
end

-- ---- parsing ----------------------------------------------------------------------------------
local function find_option(spec, name)
  for _, o in ipairs(spec.options or {}) do
    if o[1] == name or o[1]:gsub("%-", "_") == name:gsub("%-", "_") then return o end
  end
end

-- Returns opts (keys with '-' as '_'), rest (the positional arguments). Exits on --help (0) and
-- on a usage error (2). spec.on_error(msg) replaces the exit (tests).
function cli.parse(spec, argv, first)
  local opts, rest = {}, {}
  local fail = spec.on_error or function(msg) cli.usage_error(spec, msg) end
  for _, o in ipairs(spec.options or {}) do
    if o.default ~= nil then opts[(o[1]:gsub("%-", "_"))] = o.default end
  end
  local i = first or 1
  local only_positional = false
  while i <= #argv do
    local a = argv[i]
    if only_positional or a == "-" or a:sub(1, 1) ~= "-" or tonumber(a) then
      rest[#rest + 1] = a
      i = i + 1
    elseif a == "--" then
      only_positional = true
      i = i + 1
    elseif a == "--help" or a == "-h" or a == "-help" then
      out(cli.help(spec))
      io.stdout:flush()
      os.exit(0)
    else
      local name, val = a:match("^%-%-([%w_%.%-]+)=(.*)$")
      name = name or a:match("^%-%-([%w_%.%-]+)$")
      if not name then return fail(("bad option '%s' (options are --name value)"):format(a)) end
      local o = find_option(spec, name)
      local key = name:gsub("%-", "_")
      if o then
        local v
        if not o[2] then            -- a flag
          if val ~= nil then
            local b = TYPES.bool(val)
            if b == nil then return fail(("--%s takes no value (got '%s')"):format(o[1], val)) end
            v = b
          else v = true end
        else
          if val == nil then
            val = argv[i + 1]
            if val == nil or (val:match("^%-%-") and not tonumber(val) and not o.raw) then
              return fail(("--%s needs a value (%s)"):format(o[1], o[2]))
            end
            i = i + 1
          end
          local why
          v, why = convert(o.type, val)
          if v == nil then return fail(("--%s needs %s, got '%s'"):format(o[1], why or "a valid value", val)) end
        end
        local k = (o[1]:gsub("%-", "_"))
        if o["repeat"] then
          opts[k] = type(opts[k]) == "table" and opts[k] or {}
          table.insert(opts[k], v)
        else
          opts[k] = v
        end
      elseif spec.extra then
        if val == nil then
          val = argv[i + 1]
          if val == nil then return fail(("--%s needs a value"):format(name)) end
          i = i + 1
        end
        local v, why = spec.extra(key, val)
        if v == nil then return fail(why or ("unknown option --" .. name)) end
        opts[key] = v
      else
        return fail("unknown option --" .. name)
      end
      i = i + 1
    end
  end
  local npos = spec.positional and #spec.positional or 0
  local required = spec.positional_required or 0
  if #rest < required then
    return fail(("missing %s"):format(spec.positional[#rest + 1][1]))
  end
  if #rest > npos and not spec.rest then
    return fail(("unexpected argument '%s'"):format(rest[npos + 1]))
  end
  return opts, rest
end

-- Run fn(...) and turn any error into one clean line on stderr (exit 1; 130 for "interrupted");
-- ATTNLAB_TRACEBACK=1 shows the traceback instead. Exits with fn's integer result, else 0.
function cli.protect(spec, fn, ...)
  local tb = os.getenv("ATTNLAB_TRACEBACK")
  tb = tb and tb ~= "" and tb ~= "0"
  local ok, rc = xpcall(fn, function(m)
    if tb then return debug.traceback(tostring(m), 2) end
    return m
  end, ...)
  if not ok then
    local msg = type(rc) == "table" and (rc.message or rc.msg) or rc
    if tb then err(tostring(msg) .. "\n") os.exit(1) end
    cli.die(spec, msg, tostring(msg):match("interrupted") and 130 or 1)
  end
  io.stdout:flush()
  os.exit(math.type(rc) == "integer" and rc or 0)
end

-- Parse argv by spec, then cli.protect(spec, main, opts, rest).
function cli.run(spec, argv, main)
  local opts, rest = cli.parse(spec, argv)
  cli.protect(spec, main, opts, rest)
end

-- A script's text result: written to `path` atomically (a killed run leaves the old file or
-- none, never half a table) when a path is given, else printed. An unwritable path is one
-- clean error, which cli.protect turns into one line.
function cli.emit(path, text)
  if path == nil then out(text) return end
  local ok, why = require("attnlab").write_atomic(path, text)
  if not ok then error(("cannot write %s: %s"):format(path, tostring(why)), 0) end
end

-- For scripts that take free-form --a.b.c value overrides (the S2S presets): --help/-h anywhere
-- prints the help (exit 0); any top-level key of opts not in `known` (a set) is a usage error.
function cli.help_requested(spec, argv)
  for _, a in ipairs(argv) do
    if a == "--help" or a == "-h" or a == "-help" then out(cli.help(spec)) io.stdout:flush() os.exit(0) end
  end
end
function cli.check_words(spec, words)
  local w = words[1]
  if w == nil then return end
  if w:match("^%-") then cli.usage_error(spec, "unknown option " .. w) end
  cli.usage_error(spec, ("unexpected argument '%s'"):format(w))
end
function cli.check_known(spec, opts, known)
  local bad = {}
  for k in pairs(opts) do if not known[k] then bad[#bad + 1] = "--" .. tostring(k) end end
  table.sort(bad)
  if #bad > 0 then cli.usage_error(spec, "unknown option " .. table.concat(bad, ", ")) end
end

-- The free form of the S2S scripts (distill.lua, profile.lua, s2s_strategies.lua), whose keys
-- are a preset's and so not listed in a spec: "--key value" pairs (and bare words, returned in
-- order) into a table. Keys with dots set nested tables (--stage1.epochs 3); values:
-- true/false, numbers, comma lists of numbers ("4,5,6"), JSON objects/arrays ({...}/[...]),
-- else strings; a key followed by another option or by nothing is true. The scripts then check
-- the keys with cli.check_known and the words with cli.check_words.
-- A value that is not what it looks like -- '{bad json', '[1,', a comma list with a part that
-- is not a number ('224,.,32', which lost the '.') -- is one line naming the option: a usage
-- error when `spec` is given (the script's, for cli.usage_error), else an error without a Lua
-- position.
function cli.parse_pairs(argv, first, spec)
  local opts, words = {}, {}
  local i = first or 1
  local function bad(k, msg)
    msg = ("--%s: %s"):format(k, msg)
    if spec then return cli.usage_error(spec, msg) end
    error(msg, 0)
  end
  local function value(k, v)
    if v == "true" then return true elseif v == "false" then return false end
    local n = tonumber(v)
    if n then return math.tointeger(n) or n end
    if v:match("^[%[{]") then
      local x, why = util.decode_json(v)
      if why == nil then return x end
      return bad(k, ("'%s' is not valid JSON: %s"):format(v, why))
    end
    if v:match("^%-?[%d.]+,[%d.,%-]+$") then
      local t = {}
      for p in (v .. ","):gmatch("([^,]*),") do
        local x = tonumber(p)
        if not x then return bad(k, ("'%s' is not a comma list of numbers ('%s' is not a number)"):format(v, p)) end
        t[#t + 1] = math.tointeger(x) or x
      end
      return t
    end
    return v
  end
  while i <= #argv do
    local k = argv[i]:match("^%-%-([%w_.]+)$")
    if k then
      local v = argv[i + 1]
      if v == nil or v:match("^%-%-[%a]") then v = "true"; i = i + 1 else i = i + 2 end
      local t = opts
      local parts = {}
      for p in k:gmatch("[^.]+") do parts[#parts + 1] = p end
      for j = 1, #parts - 1 do
        t[parts[j]] = type(t[parts[j]]) == "table" and t[parts[j]] or {}
        t = t[parts[j]]
      end
      t[parts[#parts]] = value(k, v)
    else
      words[#words + 1] = argv[i]
      i = i + 1
    end
  end
  return opts, words
end

return cli
